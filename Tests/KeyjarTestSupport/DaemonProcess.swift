public import Foundation
import Glibc

/// A real keyjard run for a test: its own socket and database in a private directory, its
/// readiness awaited from its `ready <socket>` line, and a clean stop checked when the test ends
/// (`ServiceScope`). Every wait is asynchronous, with a deadline on the thing awaited.
public final class DaemonProcess: KeyjarService, StoppedAtTestEnd, @unchecked Sendable {
    // @unchecked: `process` is configured before it runs and only read afterwards; its exit is
    // published through `exited`.
    public let directory: TemporaryDirectory
    public let socketPath: String
    public let databasePath: String
    public let logPath: String
    private let process = Process()
    private let exited = TestLatch()
    private let extraArguments: [String]
    private let environment: [String: String]?
    private let launcher: [String]

    /// The keyjard binary beside the test bundle (SwiftPM builds it as a test dependency).
    public static var binary: String { builtExecutable(named: "keyjard") }

    /// An executable SwiftPM built beside the test bundle.
    public static func builtExecutable(named name: String) -> String {
        let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidate = directory
        // Under `swift test` arguments[0] may be the .xctest bundle or a path inside it.
        while candidate.path != "/" {
            let path = candidate.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: path) { return path }
            candidate.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name).path
    }

    /// Starts keyjard and waits until it serves.
    /// - Parameters:
    ///   - environment: keyjard's whole environment; the test's own when nil.
    ///   - launcher: a command that ends by executing its arguments (keyjard and its own),
    ///     e.g. one that first mounts a file system for it; keyjard then has the launcher's pid.
    public init(
        in directory: TemporaryDirectory? = nil,
        arguments: [String] = [],
        environment: [String: String]? = nil,
        launcher: [String] = []
    ) async throws {
        self.directory = try directory ?? TemporaryDirectory()
        socketPath = self.directory.path("run/keyjar.sock")
        databasePath = self.directory.path("data/store.sqlite3")
        logPath = self.directory.path("keyjard-\(UUID().uuidString.prefix(8)).log")
        extraArguments = arguments
        self.environment = environment
        self.launcher = launcher
        try ServiceScope.register(self)
        try await start()
    }

    private func start() async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw TestSupportError("keyjard is not built at \(Self.binary)")
        }
        let command =
            launcher + [Self.binary, "--socket", socketPath, "--database", databasePath, "--log-level", "debug"]
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst()) + extraArguments
        process.environment = childEnvironment(environment ?? ProcessInfo.processInfo.environment)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let logHandle = FileHandle(forWritingAtPath: logPath)
        process.standardError = logHandle
        let output = Pipe()
        process.standardOutput = output
        let exited = self.exited
        process.terminationHandler = { _ in exited.open() }
        try process.run()
        // keyjard has its own copies; the test's are closed now (see runCommand: Foundation
        // never releases them, and a thousand open descriptors crash its Process.run()).
        try? logHandle?.close()
        guard let line = await Self.readLine(from: output.fileHandleForReading) else {
            _ = await crash()
            throw TestSupportError("keyjard did not become ready within \(hangDeadline); log:\n\(log)")
        }
        // The ready line is all keyjard writes there.
        try? output.fileHandleForReading.close()
        guard line == "ready \(socketPath)" else {
            throw TestSupportError("unexpected first line from keyjard: \(line)")
        }
    }

    /// Reads one line, on a thread of its own; nil at the end of the output or after `deadline`.
    public static func readLine(from handle: FileHandle, within deadline: Duration = hangDeadline) async -> String? {
        let done = TestSemaphore()
        let box = LockedBox<String?>(nil)
        Thread.detachNewThread {
            var bytes: [UInt8] = []
            while true {
                let chunk = DescriptorIO.read(handle, upTo: 1)
                guard let byte = chunk.first, byte != UInt8(ascii: "\n") else { break }
                bytes.append(byte)
            }
            box.set(bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self))
            done.signal()
        }
        guard await done.wait(within: deadline) else { return nil }
        return box.get()
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { !exited.isOpen }
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits until keyjard has exited on its own; its exit status, nil if it is still running
    /// at `deadline` (or was ended by a signal).
    public func exit(within deadline: Duration = hangDeadline) async -> Int32? {
        guard await exited.wait(within: deadline) else { return nil }
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }

    /// SIGTERM, and the exit status once it has exited: nil if it had to be killed (it did not
    /// exit by `hangDeadline`) or died of a signal.
    @discardableResult
    public func stop() async -> Int32? {
        if !exited.isOpen { kill(process.processIdentifier, SIGTERM) }
        if let status = await exit() { return status }
        if !exited.isOpen {
            _ = await crash()
        }
        return nil
    }

    /// A crash: SIGKILL, no cleanup; returns once the process is gone.
    @discardableResult
    public func crash() async -> Bool {
        if !exited.isOpen { kill(process.processIdentifier, SIGKILL) }
        return await exited.wait()
    }

    /// Starts another keyjard on the same socket and database.
    public func restarted(arguments: [String]? = nil) async throws -> DaemonProcess {
        try await DaemonProcess(
            in: directory,
            arguments: arguments ?? extraArguments,
            environment: environment,
            launcher: launcher
        )
    }

    /// The end-of-test check: a keyjard still running must stop cleanly on SIGTERM. One the test
    /// stopped or crashed itself was checked by the test.
    public func stopAtTestEnd() async -> String? {
        guard isRunning else { return nil }
        let status = await stop()
        return status == 0
            ? nil : "keyjard did not stop cleanly (status \(status.map(String.init) ?? "killed")); log:\n\(log)"
    }

    deinit {
        if !exited.isOpen { kill(process.processIdentifier, SIGKILL) }
    }
}

/// A value handed between threads under a lock.
final class LockedBox<Value>: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func set(_ newValue: Value) { lock.withLock { value = newValue } }
    func get() -> Value { lock.withLock { value } }
    func mutate<Result>(_ body: (inout Value) -> Result) -> Result { lock.withLock { body(&value) } }
    func exchange(_ newValue: Value) -> Value {
        lock.withLock {
            defer { value = newValue }
            return value
        }
    }
}

/// Runs a command to completion and returns its exit status, standard output and error. The
/// output is read on threads of their own and the exit awaited, so no cooperative thread waits;
/// a command still running at `deadline` is killed and reported.
@discardableResult
public func runCommand(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String]? = nil,
    input: String? = nil,
    within deadline: Duration = hangDeadline
) async throws -> (status: Int32, output: String, error: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = childEnvironment(environment ?? ProcessInfo.processInfo.environment)
    let output = Pipe()
    let error = Pipe()
    let inputPipe = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = inputPipe
    let exited = TestLatch()
    process.terminationHandler = { _ in exited.open() }
    // Both pipes are drained to their end (the process and any child it left holding them).
    let drained = TestSemaphore()
    let outputBox = LockedBox(Data())
    let errorBox = LockedBox(Data())
    try process.run()
    for (pipe, box) in [(output, outputBox), (error, errorBox)] {
        Thread.detachNewThread {
            box.set(DescriptorIO.readToEnd(pipe.fileHandleForReading))
            drained.signal()
        }
    }
    if let input {
        let writer = inputPipe.fileHandleForWriting
        Thread.detachNewThread {
            // A command that exits without reading gets SIGPIPE's EPIPE here, not the test.
            try? writer.write(contentsOf: Data(input.utf8))
            try? writer.close()
        }
    } else {
        try? inputPipe.fileHandleForWriting.close()
    }
    let finished = await exited.wait(within: deadline)
    if !finished {
        kill(process.processIdentifier, SIGKILL)
        _ = await exited.wait()
    }
    var bothDrained = true
    for _ in 0..<2 where await !drained.wait() { bothDrained = false }
    if bothDrained {
        // Closed now, not when the pipes are deallocated: swift-corelibs-foundation keeps
        // Process objects (and their pipes) in reference cycles, and a suite that leaks two
        // descriptors per command passes a thousand open ones, where Foundation's own
        // Process.run() over-reads /proc/self/fd's directory entries and crashes (fixed in
        // swift-corelibs-foundation #5472, after Swift 6.3.1). A reader still blocked (a child
        // left holding a pipe) keeps its descriptor: closed under it, the number could be
        // reused and read from.
        for pipe in [output, error] { try? pipe.fileHandleForReading.close() }
    }
    guard finished else {
        throw WaitTimedOut("\(executable) \(arguments.joined(separator: " ")) exiting", after: deadline)
    }
    return (
        process.terminationStatus, String(decoding: outputBox.get(), as: UTF8.self),
        String(decoding: errorBox.get(), as: UTF8.self)
    )
}

/// Starts a program with posix_spawn, a clean signal mask and stdout (unless `standardOutput`
/// names a descriptor) and stderr to /dev/null, and returns its pid. Foundation's Process passes
/// on the calling thread's signal mask (Swift's worker threads block SIGCHLD, among others),
/// which breaks programs that wait for children; and it learns of a child's end when a socket
/// the child inherits closes, then waits for that child, blocking the reaping of every other
/// child: a program that closes the descriptors it inherited (systemd-socket-activate does)
/// stalls every Process of the test run until it exits.
public func spawnQuietly(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String],
    standardOutput: Int32? = nil
) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    if let standardOutput {
        posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
    } else {
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    }
    // Nothing else of the test process: an inherited pipe's write end would keep another
    // test's reader from seeing its end (and Foundation's per-child socket, from seeing that
    // child's exit) for as long as this program runs.
    try closeFrom(3, in: &actions)
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var noSignals = sigset_t()
    sigemptyset(&noSignals)
    posix_spawnattr_setsigmask(&attributes, &noSignals)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    var argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
    var envp: [UnsafeMutablePointer<CChar>?] =
        childEnvironment(environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for pointer in argv + envp { free(pointer) }
    }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, executable, &actions, &attributes, &argv, &envp)
    guard status == 0 else {
        throw TestSupportError("cannot start \(executable): \(String(cString: strerror(status)))")
    }
    return pid
}

/// Adds "close every descriptor from `lowest` on" to `actions`: glibc's
/// posix_spawn_file_actions_addclosefrom_np (2.34 and later), which Swift's Glibc module does
/// not import, found with dlsym. Closing a list of descriptors instead would race with other
/// threads opening and closing theirs.
private func closeFrom(_ lowest: Int32, in actions: inout posix_spawn_file_actions_t) throws {
    typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
    guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else {
        throw TestSupportError("this C library has no posix_spawn_file_actions_addclosefrom_np (glibc 2.34+)")
    }
    let addCloseFrom = unsafeBitCast(symbol, to: AddCloseFrom.self)
    let status = withUnsafeMutablePointer(to: &actions) { addCloseFrom($0, lowest) }
    guard status == 0 else { throw TestSupportError("addclosefrom failed: \(String(cString: strerror(status)))") }
}

/// Waits (on a thread of its own) for a child started by `spawnQuietly` and returns its exit
/// status (-1 if signalled).
public func waitForExit(_ pid: pid_t) async -> Int32 {
    (try? await onOwnThread { reap(pid) }) ?? -1
}

/// Reaps a child started by `spawnQuietly`, blocking; for a child already sent SIGKILL, whose
/// end the kernel does not delay.
public func reap(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    // WIFEXITED / WEXITSTATUS, which Swift does not import as macros.
    return status & 0x7F == 0 ? (status >> 8) & 0xFF : -1
}

/// A child's environment: under `scripts/test --sanitize=address`, Keyjar's own programs (keyjard,
/// keyjar, the test peer) check for leaks (`KEYJAR_CHILD_ASAN_OPTIONS`), while the test runner
/// does not: its Foundation `Process` objects, hundreds of them, are kept in reference cycles
/// by swift-corelibs-foundation and would bury any real report.
/// A keyjard a child starts by itself (auto-start) may take as long as any wait of the tests
/// (`KEYJAR_START_TIMEOUT`), not the 10 s a user gets: on a machine running the whole suite its
/// first contact with the Secret Service can take longer.
public func childEnvironment(_ base: [String: String]) -> [String: String] {
    var environment = base
    if environment["KEYJAR_START_TIMEOUT"] == nil {
        environment["KEYJAR_START_TIMEOUT"] = String(Int(hangSeconds))
    }
    if let options = ProcessInfo.processInfo.environment["KEYJAR_CHILD_ASAN_OPTIONS"] {
        environment["ASAN_OPTIONS"] = options
    }
    return environment
}

/// Puts an executable file at `destination`, a copy of `source` (or a script with `contents`),
/// written by a child process. A file this process wrote itself could not be run at once: any
/// other test's fork between our open and close hands the child a copy of the write descriptor,
/// and until that child calls exec, exec of the file fails with ETXTBSY ("Text file busy").
/// `install` opens, writes and closes the file in a process no test forks from.
public func installExecutable(copying source: String, to destination: String) async throws {
    let result = try await runCommand("/usr/bin/install", ["-m", "0755", source, destination])
    guard result.status == 0 else {
        throw TestSupportError("install \(source) \(destination) failed: \(result.error)")
    }
}

/// `installExecutable(copying:to:)` for a script: its text goes to a file that is never run,
/// and `install` makes the executable copy.
public func installExecutable(script contents: String, at destination: String) async throws {
    let text = destination + ".text"
    try contents.write(toFile: text, atomically: true, encoding: .utf8)
    try await installExecutable(copying: text, to: destination)
}
