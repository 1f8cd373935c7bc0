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
    private let process = ChildProcess()
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
        // keyjard has its own copy; the test's is closed now, not when this object goes.
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
        guard hasStarted else { return nil }
        if !exited.isOpen { kill(process.processIdentifier, SIGTERM) }
        if let status = await exit() { return status }
        if !exited.isOpen {
            _ = await crash()
        }
        return nil
    }

    /// SIGHUP: a clean stop for a restart within the login session (an upgrade); the exit status
    /// as for ``stop()``.
    @discardableResult
    public func stopForRestart() async -> Int32? {
        guard hasStarted else { return nil }
        if !exited.isOpen { kill(process.processIdentifier, SIGHUP) }
        if let status = await exit() { return status }
        if !exited.isOpen { _ = await crash() }
        return nil
    }

    /// A crash: SIGKILL, no cleanup; returns once the process is gone.
    @discardableResult
    public func crash() async -> Bool {
        guard hasStarted else { return true }
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

    /// Whether keyjard was ever started. One that was not has process identifier 0, and
    /// kill(0, …) would signal the whole process group: the test run itself.
    private var hasStarted: Bool { process.processIdentifier > 0 }

    deinit {
        if hasStarted, !exited.isOpen { kill(process.processIdentifier, SIGKILL) }
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
    let process = ChildProcess()
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
        // Closed now, not when the pipes are deallocated (a result kept by a test keeps
        // them). A reader still blocked (a child left holding a pipe) keeps its descriptor:
        // closed under it, the number could be reused and read from.
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

/// A child's environment: under `scripts/test --sanitize=address`, Keyjar's own programs (keyjard,
/// keyjar, the test peer) check for leaks (`KEYJAR_CHILD_ASAN_OPTIONS`), while the test runner
/// does not: it ends with the suite's shared servers, threads and caches alive by design, and
/// their reports would bury any real one.
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
