import CProcessControl
import Glibc

/// Starting a program with posix_spawn, by one rule: where its standard streams go, which of
/// this process's descriptors it keeps, and the signal state it starts with. keyjard's launcher
/// and the benchmark's runners start their children through this.
package enum ProcessSpawn {
    /// Where one of the child's standard streams goes.
    package enum Stream: Sendable {
        /// The file at the path, opened with these flags (and mode, when it creates one).
        case file(String, flags: Int32, mode: UInt32 = 0o600)
        /// A copy of this process's descriptor.
        case descriptor(Int32)
        /// /dev/null, opened for the stream's direction.
        case null
    }

    /// How the child starts.
    package struct Options: Sendable {
        package var standardInput: Stream?
        package var standardOutput: Stream?
        package var standardError: Stream?
        /// Its environment; nil for this process's.
        package var environment: [String: String]?
        /// In a session of its own, so that it outlives this process and its terminal.
        package var newSession = false
        /// Closes every descriptor above 2 that this process would let it inherit: a child that
        /// outlives this process must not keep, say, a pipe open that our parent reads to its end.
        package var closesInheritedDescriptors = false
        /// The process group it joins; 0 for a new one it leads; nil for this process's.
        package var processGroup: Int32?
        /// The program is a name looked up in `PATH` (posix_spawnp) when it has no slash.
        package var searchesPath = false

        package init(
            standardInput: Stream? = nil,
            standardOutput: Stream? = nil,
            standardError: Stream? = nil,
            environment: [String: String]? = nil
        ) {
            self.standardInput = standardInput
            self.standardOutput = standardOutput
            self.standardError = standardError
            self.environment = environment
        }
    }

    /// Why a program could not be started: the program and the error's text.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var program: String
        package var errorNumber: Int32
        package var description: String { "cannot start \(program): \(String(cString: strerror(errorNumber)))" }
    }

    /// glibc's POSIX_SPAWN_SETSID, which Glibc's Swift module does not export.
    private static let setSessionFlag: Int32 = 0x80

    /// Starts `arguments[0]` (a path, or a name with ``Options/searchesPath``) with `arguments`. The child's signal mask is empty and its
    /// signals at their defaults whatever the calling thread blocks (Swift's worker threads
    /// block some): it must receive SIGTERM and SIGCHLD like any program.
    package static func start(_ arguments: [String], _ options: Options = Options()) throws(Failure) -> Int32 {
        precondition(!arguments.isEmpty, "a program to start")
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [
            (Int32(0), options.standardInput), (1, options.standardOutput), (2, options.standardError),
        ] {
            switch stream {
            case nil: break
            case .file(let path, let flags, let mode):
                posix_spawn_file_actions_addopen(&actions, target, path, flags, mode)
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .descriptor(let source):
                posix_spawn_file_actions_adddup2(&actions, source, target)
            }
        }
        if options.closesInheritedDescriptors {
            // In the child, after the streams are in place: a list taken here would miss a
            // descriptor another thread opens before the spawn.
            posix_spawn_file_actions_addclosefrom_np(&actions, 3)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var defaults = sigset_t()
        sigfillset(&defaults)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var flags = Int32(POSIX_SPAWN_SETSIGMASK) | Int32(POSIX_SPAWN_SETSIGDEF)
        if options.newSession { flags |= setSessionFlag }
        if let group = options.processGroup {
            posix_spawnattr_setpgroup(&attributes, group)
            flags |= Int32(POSIX_SPAWN_SETPGROUP)
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: Int32 = 0
        let status: Int32
        let spawn = options.searchesPath ? posix_spawnp : posix_spawn
        if let environment = options.environment {
            var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
            defer { for pointer in envp { free(pointer) } }
            status = spawn(&pid, arguments[0], &actions, &attributes, &argv, &envp)
        } else {
            status = spawn(&pid, arguments[0], &actions, &attributes, &argv, environ)
        }
        guard status == 0 else { throw Failure(program: arguments[0], errorNumber: status) }
        return pid
    }

    /// How a child ended.
    package struct Exit: Sendable {
        /// Its exit status; 128 + the signal's number for one a signal ended (as a shell says).
        package var status: Int32
        /// Whether a signal ended it.
        package var wasSignalled: Bool
        /// Its peak resident memory, in bytes.
        package var peakResidentBytes: Int
    }

    /// How `pid` ended, if it has (without waiting); nil while it runs.
    package static func exitIfEnded(_ pid: Int32) -> Exit? {
        var raw: Int32 = 0
        var usage = rusage()
        var reaped: Int32
        repeat { reaped = wait4(pid, &raw, WNOHANG, &usage) } while reaped < 0 && errno == EINTR
        return reaped == pid ? exit(raw: raw, usage: usage) : nil
    }

    /// Waits for `pid` to end (again after an interruption).
    package static func wait(_ pid: Int32) -> Exit {
        var raw: Int32 = 0
        var usage = rusage()
        while wait4(pid, &raw, 0, &usage) < 0 && errno == EINTR {}
        return exit(raw: raw, usage: usage)
    }

    private static func exit(raw: Int32, usage: rusage) -> Exit {
        // WIFEXITED / WEXITSTATUS / WTERMSIG, which are C macros.
        let signal = raw & 0x7F
        return Exit(
            status: signal == 0 ? (raw >> 8) & 0xFF : 128 + signal,
            wasSignalled: signal != 0,
            peakResidentBytes: usage.ru_maxrss * 1024
        )
    }
}
