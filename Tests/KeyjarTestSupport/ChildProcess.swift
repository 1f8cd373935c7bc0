public import Foundation
import Glibc
import KeyjarPlatform

/// A program a test runs: the part of Foundation's `Process` the suite uses, on posix_spawn.
///
/// Foundation's `Process.run()` cannot be used by a suite this size. It finds the descriptors to
/// close by listing /proc/self/fd and copies a whole 256-byte name out of each directory entry,
/// reading past glibc's 32 KB buffer once a process has more than about 1,300 descriptors open:
/// the test runner crashed there (fixed in swift-corelibs-foundation #5472, after Swift 6.3.1).
/// It also keeps every `Process` and its pipes in reference cycles, passes on the calling
/// thread's signal mask (Swift's worker threads block SIGTERM and SIGCHLD) and puts each child
/// in a process group of its own, where nothing ends it when the runner crashes.
///
/// Here a child starts as Keyjar starts its own (`ProcessSpawn`): it closes every inherited
/// descriptor but 0, 1 and 2, starts with no signals blocked and every
/// disposition at its default, and joins `ChildGroup`, which ends whatever the runner leaves
/// running when it exits, crashed or not. Standard input is /dev/null unless set; standard
/// output and error are the runner's unless set.
public final class ChildProcess: @unchecked Sendable {
    // @unchecked: the configuration is set before `run()` and only read afterwards; what the
    // exit changes is under `lock`.
    public enum TerminationReason: Sendable {
        case exit
        case uncaughtSignal
    }

    public var executableURL: URL?
    public var arguments: [String]?
    /// The whole environment; the runner's own when nil.
    public var environment: [String: String]?
    public var standardInput: (any ChildStream)?
    public var standardOutput: (any ChildStream)?
    public var standardError: (any ChildStream)?
    /// The process group it joins.
    public var group = ChildGroup.shared
    /// Called once, on the thread that reaped the child.
    public var terminationHandler: (@Sendable (ChildProcess) -> Void)?

    private let lock = NSLock()
    private var pid: pid_t = 0
    private var status: (reason: TerminationReason, code: Int32)?
    private let exited = TestLatch()

    public init() {}

    /// The child's pid; 0 before `run()`.
    public var processIdentifier: Int32 { lock.withLock { pid } }

    /// True from `run()` until the child has been reaped.
    public var isRunning: Bool { lock.withLock { pid != 0 && status == nil } }

    /// The exit status, or the signal that ended it; 0 while it runs.
    public var terminationStatus: Int32 { lock.withLock { status?.code ?? 0 } }

    public var terminationReason: TerminationReason { lock.withLock { status?.reason ?? .exit } }

    /// Starts the program. The child's ends of pipes given as its streams are closed here once
    /// it has its copies, so that the runner sees the end of its output when it exits.
    public func run() throws {
        guard let executableURL else { throw TestSupportError("ChildProcess.run() without an executableURL") }
        let streams = [standardInput, standardOutput, standardError]
        var descriptors: [ChildDescriptor] = []
        for (number, stream) in streams.enumerated() {
            if let stream {
                descriptors.append(.descriptor(stream.childDescriptor(reading: number == 0)))
            } else {
                descriptors.append(number == 0 ? .null : .inherit)
            }
        }
        let started = try spawnChild(
            executableURL.path,
            arguments ?? [],
            environment: environment ?? ProcessInfo.processInfo.environment,
            streams: descriptors,
            group: group
        )
        for (number, stream) in streams.enumerated() { stream?.closeChildEnd(reading: number == 0) }
        lock.withLock { pid = started }
        // A thread per child waits for it: blocking in waitpid on a pid of its own is the one
        // way to learn of the exit that neither holds a cooperative thread nor reaps another
        // waiter's child.
        let thread = Thread { [self] in
            let status = reapChild(started)
            lock.withLock { self.status = status }
            exited.open()
            let handler = lock.withLock { () -> (@Sendable (ChildProcess) -> Void)? in
                defer { terminationHandler = nil }
                return terminationHandler
            }
            handler?(self)
        }
        thread.stackSize = 256 << 10
        thread.start()
    }

    /// SIGTERM.
    public func terminate() {
        let target = processIdentifier
        if target != 0 && isRunning { kill(target, SIGTERM) }
    }

    /// Waits until the child has exited and been reaped; false if `deadline` passed first.
    public func exit(within deadline: Duration = hangDeadline) async -> Bool {
        await exited.wait(within: deadline)
    }
}

/// What a `ChildProcess` can be given as standard input, output or error.
public protocol ChildStream {
    /// The descriptor the child gets: a pipe's end it reads (`reading`) or writes.
    func childDescriptor(reading: Bool) -> Int32
    /// Closes the runner's copy of the child's end, once the child has its own.
    func closeChildEnd(reading: Bool)
}

extension Pipe: ChildStream {
    public func childDescriptor(reading: Bool) -> Int32 {
        reading ? fileHandleForReading.fileDescriptor : fileHandleForWriting.fileDescriptor
    }

    public func closeChildEnd(reading: Bool) {
        try? (reading ? fileHandleForReading : fileHandleForWriting).close()
    }
}

extension FileHandle: ChildStream {
    /// `FileHandle.nullDevice` has no descriptor (-1): the child gets /dev/null for it.
    public func childDescriptor(reading: Bool) -> Int32 { fileDescriptor }

    /// A file handle stays the caller's to close.
    public func closeChildEnd(reading: Bool) {}
}

/// What a child gets as descriptor 0, 1 or 2.
enum ChildDescriptor {
    case inherit
    case null
    case descriptor(Int32)
}

/// Starts a program as `ChildProcess` describes: `streams` gives descriptors 0, 1 and 2 (a
/// missing one is inherited), nothing else is inherited, signals start unblocked and at their
/// defaults, and the child joins `group`.
func spawnChild(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String],
    streams: [ChildDescriptor],
    group: ChildGroup = .shared
) throws -> pid_t {
    try spawnProcess(executable, arguments, environment: environment, streams: streams, processGroup: group.identifier)
}

/// `spawnChild`'s work, into the process group `processGroup` (0: a new group, led by the child),
/// by Keyjar's own rule for starting a program (`ProcessSpawn`).
private func spawnProcess(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String],
    streams: [ChildDescriptor],
    processGroup: pid_t
) throws -> pid_t {
    func stream(_ number: Int) -> ProcessSpawn.Stream? {
        guard number < streams.count else { return nil }
        switch streams[number] {
        case .inherit: return nil
        case .descriptor(let descriptor) where descriptor >= 0: return .descriptor(descriptor)
        case .null, .descriptor: return .null
        }
    }
    var options = ProcessSpawn.Options(
        standardInput: stream(0),
        standardOutput: stream(1),
        standardError: stream(2),
        environment: environment
    )
    // Nothing else of the runner's: an inherited pipe's write end would keep another test's
    // reader from seeing its end for as long as this program runs.
    options.closesInheritedDescriptors = true
    options.processGroup = processGroup
    do {
        return try ProcessSpawn.start([executable] + arguments, options)
    } catch {
        throw TestSupportError("\(error)")
    }
}

/// The process group every child of the runner joins, led by a guard: a shell that reads a pipe
/// only the runner holds and, at its end (the runner exited, crashed or not), kills the group.
/// A crashed runner runs none of its tests' clean-ups; the servers and daemons they started would
/// otherwise live on holding `swift test`'s output open, and the run would never end.
/// Programs that start a session of their own (keyjard started by a client) leave the group and
/// are the tests' to stop.
public final class ChildGroup: Sendable {
    /// The group of every `ChildProcess` unless told otherwise.
    public static let shared = ChildGroup()

    private let started: Result<(guardian: pid_t, lifeline: Int32), TestSupportError>

    /// Starts the guard; a failure is reported by the first spawn into the group.
    public init() {
        started = Result { try Self.startGuard() }.mapError { $0 as? TestSupportError ?? TestSupportError("\($0)") }
    }

    /// The group's id (the guard's pid).
    var identifier: pid_t {
        get throws { try started.get().guardian }
    }

    /// What the runner's exit does to its group, for a test: the end of the guard's input. Every
    /// process still in the group is killed; returns once the guard has gone.
    public func end() async throws {
        let (guardian, lifeline) = try started.get()
        precondition(self !== Self.shared, "the shared group ends with the test runner")
        close(lifeline)
        _ = await waitForExit(guardian)
    }

    private static func startGuard() throws -> (guardian: pid_t, lifeline: Int32) {
        guard let pipe = FileDescriptor.pipe() else {
            throw TestSupportError("cannot make the child group's pipe: \(String(cString: strerror(errno)))")
        }
        let ends = [pipe.read, pipe.write]
        defer { close(ends[0]) }
        // A group of its own, which every later child joins. SIGHUP and SIGTERM ignored: only
        // the end of its input (or SIGKILL) ends the guard.
        let guardian = try spawnProcess(
            "/bin/sh",
            ["-c", "trap '' HUP TERM; read -r _; kill -KILL 0"],
            environment: ["PATH": "/usr/bin:/bin"],
            streams: [.descriptor(ends[0]), .null, .null],
            processGroup: 0
        )
        // The write end stays open, written to by no one, until the runner exits.
        return (guardian, ends[1])
    }
}

/// Waits for `pid` to end, blocking; how it ended.
private func reapChild(_ pid: pid_t) -> (reason: ChildProcess.TerminationReason, code: Int32) {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    // WIFEXITED / WEXITSTATUS / WTERMSIG, which Swift does not import as macros.
    let signal = status & 0x7F
    return signal == 0 ? (.exit, (status >> 8) & 0xFF) : (.uncaughtSignal, signal)
}

/// Starts a program with stdin and stderr on /dev/null and stdout on /dev/null (or the
/// descriptor `standardOutput`), and returns its pid, to be reaped with `waitForExit(_:)` or
/// `reap(_:)`: for programs a test starts and watches by pid (a server's worker that must be
/// found by its pid alone).
public func spawnQuietly(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String],
    standardOutput: Int32? = nil
) throws -> pid_t {
    try spawnChild(
        executable,
        arguments,
        environment: childEnvironment(environment),
        streams: [.null, standardOutput.map { .descriptor($0) } ?? .null, .null]
    )
}

/// Waits (on a thread of its own) for a child started by `spawnQuietly` and returns its exit
/// status (-1 if signalled).
public func waitForExit(_ pid: pid_t) async -> Int32 {
    (try? await onOwnThread { reap(pid) }) ?? -1
}

/// Reaps a child started by `spawnQuietly`, blocking; for a child already sent SIGKILL, whose
/// end the kernel does not delay.
public func reap(_ pid: pid_t) -> Int32 {
    let ended = reapChild(pid)
    return ended.reason == .exit ? ended.code : -1
}

/// Waits until a `ChildProcess` the test started has exited; throws `WaitTimedOut` at `deadline`.
public func waitForExit(_ process: ChildProcess, within deadline: Duration = hangDeadline) async throws {
    guard await process.exit(within: deadline) else {
        throw WaitTimedOut("\(process.executableURL?.lastPathComponent ?? "a process") exiting", after: deadline)
    }
}
