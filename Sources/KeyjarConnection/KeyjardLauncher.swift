import FoundationEssentials
import Glibc
import KeyjarPlatform
import KeyjarProtocol

/// Starts keyjard when no one serves the socket: exactly once even when several processes try
/// at the same moment (they queue on `autostart.lock` beside the socket, and the ones after
/// the first find it serving).
enum KeyjardLauncher {
    /// How long a start may take before the caller is told keyjard is unreachable: 10 s, or
    /// `KEYJAR_START_TIMEOUT` seconds (a slow or very busy machine, where keyjard's first
    /// contact with the Secret Service can take longer).
    static var startTimeout: TimeInterval {
        guard let text = ProcessInfo.processInfo.environment["KEYJAR_START_TIMEOUT"],
            let seconds = TimeInterval(text), seconds > 0, seconds.isFinite
        else { return 10 }
        return seconds
    }

    /// Makes sure a keyjard serves this client's database, starting one on `socketPath` if
    /// none does; returns the socket it listens on. That is `socketPath`, unless a keyjard
    /// already serves the database on another socket (its ``DatabasePointer`` says which): a
    /// shell without `XDG_RUNTIME_DIR` computes another socket than the desktop's, and must
    /// reach the keyjard that serves the same database rather than start a second one.
    @discardableResult
    static func ensureRunning(
        socketPath: String,
        database: String = KeyjarPaths.defaultDatabasePath(),
        timeout: TimeInterval = startTimeout
    ) throws(KeyjarClientError) -> String {
        let directory = PathName.directory(of: socketPath)
        do {
            try PrivateDirectory.make(directory)
        } catch {
            throw unreachable("keyjard cannot be started: the socket directory \(error)")
        }
        let lock = open(directory + "/autostart.lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw unreachable("cannot open \(directory)/autostart.lock") }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 && errno == EINTR {}
        defer { flock(lock, LOCK_UN) }

        if let socket = try? UnixSocket.connect(path: socketPath) {
            socket.close()
            return socketPath
        }
        // A keyjard that holds the serving lock but does not answer yet is starting (it was
        // started by hand, by systemd, or just after the last one was killed): wait for it
        // rather than start another, which would only find the lock taken.
        let deadline = Date().addingTimeInterval(timeout)
        let serverLock = directory + "/keyjard.lock"
        if try waitForStartingKeyjard(lockPath: serverLock, socketPath: socketPath, until: deadline) {
            return socketPath
        }
        if let elsewhere = servingElsewhere(than: socketPath, database: database, until: deadline) { return elsewhere }
        guard let binary = findKeyjard() else { throw unreachable(notFound(socketPath: socketPath)) }
        // Ours may lose the race for the serving lock to one started meanwhile (then that one
        // serves, and is waited for); and that one may itself stop before it serves (killed, or
        // failing), leaving nobody. Looking again after each, a few times, ends with a keyjard
        // serving whatever order the others came and went in; one that fails by itself every
        // time is reported after the last try.
        var attempts = 0
        while true {
            attempts += 1
            do {
                try spawn(
                    binary,
                    socketPath: socketPath,
                    database: database,
                    logPath: directory + "/keyjard.log",
                    timeout: timeout
                )
                return socketPath
            } catch {
                if try waitForStartingKeyjard(lockPath: serverLock, socketPath: socketPath, until: deadline) {
                    return socketPath
                }
                if let socket = try? UnixSocket.connect(path: socketPath) {
                    socket.close()
                    return socketPath
                }
                // Ours found the database served meanwhile (a keyjard started on another socket).
                if let elsewhere = servingElsewhere(than: socketPath, database: database, until: deadline) {
                    return elsewhere
                }
                guard attempts < 3, Date() < deadline else { throw error }
            }
        }
    }

    /// The socket a keyjard serving this client's database answers on now, starting none and
    /// waiting for none: `socketPath` itself, else the one its ``DatabasePointer`` names.
    static func servingNow(socketPath: String, database: String) -> String? {
        if let socket = try? UnixSocket.connect(path: socketPath) {
            socket.close()
            return socketPath
        }
        return servingElsewhere(than: socketPath, database: database, until: Date())
    }

    /// The socket of the keyjard that serves `database` when that is not `socketPath`: its
    /// ``DatabasePointer`` held by a live keyjard (the kernel's lock table says so, without
    /// touching the lock), and answering there, checked as every socket is (its directory and
    /// its peer, the user); nil otherwise. One that holds the database but does not answer yet
    /// (it takes the lock before it listens) is waited for until `deadline`, while it lives.
    static func servingElsewhere(
        than socketPath: String,
        database: String,
        until deadline: Date = Date().addingTimeInterval(startTimeout)
    ) -> String? {
        let pointerPath = DatabasePointer.path(forDatabase: database)
        while let holder = ServingLock.holder(of: pointerPath) {
            guard let pointer = DatabasePointer.read(at: pointerPath), pointer.socketPath != socketPath else {
                return nil
            }
            if let socket = try? UnixSocket.connect(path: pointer.socketPath) {
                socket.close()
                return pointer.socketPath
            }
            guard Date() < deadline, kill(holder, 0) == 0 || errno != ESRCH else { return nil }
            usleep(5_000)
        }
        return nil
    }

    /// Waits while a live process holds keyjard's serving lock, until the socket answers (true)
    /// or the deadline passes (an error); false at once when nobody holds the lock, or when its
    /// holder dies without serving.
    private static func waitForStartingKeyjard(
        lockPath: String,
        socketPath: String,
        until deadline: Date
    ) throws(KeyjarClientError) -> Bool {
        guard var holder = ServingLock.holder(of: lockPath) else { return false }
        while Date() < deadline {
            if let socket = try? UnixSocket.connect(path: socketPath) {
                socket.close()
                return true
            }
            if kill(holder, 0) != 0 && errno == ESRCH {
                guard let next = ServingLock.holder(of: lockPath) else { return false }
                holder = next
            }
            usleep(5_000)
        }
        throw unreachable("keyjard (pid \(holder)) holds \(lockPath) but did not start serving \(socketPath) in time")
    }

    private static func unreachable(_ message: String) -> KeyjarClientError {
        KeyjarClientError(code: .unreachable, message: message)
    }

    /// Why no keyjard can be started, and the ways to provide one. An application that depends
    /// on the Keyjar package does not get keyjard from its own `swift build`, which builds only
    /// the products it uses: this is the first message its developer sees.
    static func notFound(socketPath: String) -> String {
        var message = "no keyjard answers at \(socketPath) and none was found to start"
        if let explicit = ProcessInfo.processInfo.environment["KEYJAR_KEYJARD"] {
            message += " (KEYJAR_KEYJARD is \"\(explicit)\", which is not an executable file)"
        }
        return message
            + ": set KEYJAR_KEYJARD to keyjard's path (an application that depends on Keyjar builds it with"
            + " `swift build --product keyjard`), install keyjard on PATH, or put it next to this program"
    }

    /// `$KEYJAR_KEYJARD`, else `keyjard` beside the running executable (``ProgramLayout``: in
    /// its directory, or `PREFIX/bin` for keyjar-full in `PREFIX/libexec/keyjar`), else on PATH. Only an
    /// absolute PATH entry counts: an empty one, `.` or `bin` would run whatever `keyjard` the
    /// working directory holds (a downloaded archive, another user's directory) with every
    /// secret of the user.
    static func findKeyjard(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        if let explicit = environment["KEYJAR_KEYJARD"], !explicit.isEmpty {
            let path = KeyjarPaths.absolute(explicit)
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        if let beside = ProgramLayout.program(named: "keyjard") { return beside }
        for directory in (environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":")
        where directory.hasPrefix("/") {
            let candidate = "\(directory)/keyjard"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Spawns keyjard in a session of its own (so it outlives this process and its terminal),
    /// serving `database` (named, so that it is the one the client looks for it by), logging to
    /// `logPath`, and waits for its "ready" line.
    private static func spawn(
        _ binary: String,
        socketPath: String,
        database: String,
        logPath: String,
        timeout: TimeInterval
    ) throws(KeyjarClientError) {
        // Only keyjard's stdout (a dup2'ed copy) keeps the pipe open in the child.
        guard let pipe = FileDescriptor.pipe() else { throw unreachable("cannot start keyjard: pipe failed") }
        var options = ProcessSpawn.Options(
            standardInput: .null,
            standardOutput: .descriptor(pipe.write),
            standardError: .file(logPath, flags: O_WRONLY | O_CREAT | O_APPEND)
        )
        // keyjard outlives this process: in a session of its own, keeping none of our
        // descriptors (a pipe our parent reads would then never see its end).
        options.newSession = true
        options.closesInheritedDescriptors = true
        let spawned = Result { () throws(ProcessSpawn.Failure) in
            try ProcessSpawn.start([binary, "--socket", socketPath, "--database", database], options)
        }
        close(pipe.write)
        defer { close(pipe.read) }
        if case .failure(let failure) = spawned { throw unreachable(failure.description) }
        // Wait for "ready <socket>", with a deadline; keyjard writes nothing else to stdout.
        let deadline = Date().addingTimeInterval(timeout)
        var line: [UInt8] = []
        var byte: UInt8 = 0
        while Date() < deadline {
            var poller = pollfd(fd: pipe.read, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            guard read(pipe.read, &byte, 1) == 1 else { break }
            if byte == UInt8(ascii: "\n") {
                if String(decoding: line, as: UTF8.self).hasPrefix("ready ") { return }
                line.removeAll()
            } else {
                line.append(byte)
            }
        }
        let why = lastLine(of: logPath).map { ": \($0)" } ?? ""
        throw unreachable("keyjard (\(binary)) did not become ready; see \(logPath)\(why)")
    }
}

extension KeyjardLauncher {
    /// The last line of keyjard's log, where a keyjard that stops before serving says why. Only
    /// the end is read: every start appends to the same log.
    static func lastLine(of logPath: String) -> String? {
        let descriptor = open(logPath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        let size = lseek(descriptor, 0, SEEK_END)
        guard size >= 0, lseek(descriptor, size > 4096 ? size - 4096 : 0, SEEK_SET) >= 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return String(decoding: bytes[..<count], as: UTF8.self).split(separator: "\n").last.map(String.init)
    }
}

/// Who holds keyjard's serving lock (`keyjard.lock`, an `flock`), read from the kernel's lock
/// table without touching the lock: taking it even for a moment could make a keyjard that is
/// starting at that instant give up.
enum ServingLock {
    /// The pid holding an `flock` on `path`, or nil when nobody does.
    static func holder(of path: String) -> pid_t? {
        var status = stat()
        guard stat(path, &status) == 0, let table = kernelTable("/proc/locks") else { return nil }
        let device = UInt64(status.st_dev)
        // The kernel prints the superblock's device as hex major:minor (Linux's encoding).
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        // At least two lower-case hex digits, as the kernel prints a device's numbers (`%02x`).
        let wanted = "\(Hex.digits(major, width: 2)):\(Hex.digits(minor, width: 2)):\(status.st_ino)"
        for line in table.split(separator: "\n") {
            // "1: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF"; "1: -> FLOCK …" lines are waiters.
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 6, fields[1] == "FLOCK", fields[5] == wanted, let pid = pid_t(fields[4]) else {
                continue
            }
            return pid
        }
        return nil
    }

    /// A /proc file whole. Its size reads as 0, and Foundation's `String(contentsOfFile:)` then
    /// stops after 4,095 bytes: about 75 of /proc/locks' lines, while a busy system (or the test
    /// suite) holds hundreds of locks, and a starting keyjard's would go unseen.
    static func kernelTable(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes += buffer[0..<count]
            } else if count == 0 {
                return String(decoding: bytes, as: UTF8.self)
            } else if errno != EINTR {
                return nil
            }
        }
    }
}
