public import Foundation
import Glibc

/// A real keyjard run for a test: its own socket and database in a private directory, its
/// readiness awaited from its `ready <socket>` line, and a teardown that checks a clean stop.
public final class DaemonProcess: @unchecked Sendable {
    // @unchecked: `process` is only touched from the owning test; the pipes are read by one
    // thread each, and their results cross over under `lock`.
    public let directory: TemporaryDirectory
    public let socketPath: String
    public let databasePath: String
    public let logPath: String
    private let process = Process()
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

    /// Starts keyjard and waits (up to `timeout`) until it serves.
    /// - Parameters:
    ///   - environment: keyjard's whole environment; the test's own when nil.
    ///   - launcher: a command that ends by executing its arguments (keyjard and its own),
    ///     e.g. one that first mounts a file system for it; keyjard then has the launcher's pid.
    public init(
        in directory: TemporaryDirectory? = nil,
        arguments: [String] = [],
        environment: [String: String]? = nil,
        launcher: [String] = [],
        timeout: TimeInterval = 20
    ) throws {
        self.directory = try directory ?? TemporaryDirectory()
        socketPath = self.directory.path("run/keyjar.sock")
        databasePath = self.directory.path("data/store.sqlite3")
        logPath = self.directory.path("keyjard-\(UUID().uuidString.prefix(8)).log")
        extraArguments = arguments
        self.environment = environment
        self.launcher = launcher
        try start(timeout: timeout)
    }

    private func start(timeout: TimeInterval) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw TestSupportError("keyjard is not built at \(Self.binary)")
        }
        let command =
            launcher + [Self.binary, "--socket", socketPath, "--database", databasePath, "--log-level", "debug"]
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst()) + extraArguments
        process.environment = childEnvironment(environment ?? ProcessInfo.processInfo.environment)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.standardError = FileHandle(forWritingAtPath: logPath)
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        guard let line = Self.readLine(from: output.fileHandleForReading, timeout: timeout) else {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            throw TestSupportError("keyjard did not become ready within \(timeout) s; log:\n\(log)")
        }
        guard line == "ready \(socketPath)" else {
            throw TestSupportError("unexpected first line from keyjard: \(line)")
        }
    }

    /// Reads one line with a deadline, on a thread of its own so the test never hangs.
    public static func readLine(from handle: FileHandle, timeout: TimeInterval) -> String? {
        let done = DispatchSemaphore(value: 0)
        let box = LockedBox<String?>(nil)
        Thread.detachNewThread {
            var bytes: [UInt8] = []
            while true {
                let chunk = handle.readData(ofLength: 1)
                guard let byte = chunk.first, byte != UInt8(ascii: "\n") else { break }
                bytes.append(byte)
            }
            box.set(bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self))
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success else { return nil }
        return box.get()
    }

    public var pid: Int32 { process.processIdentifier }
    public var isRunning: Bool { process.isRunning }
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// SIGTERM, then wait up to 5 s: returns the exit status (nil if it had to be killed).
    @discardableResult
    public func stop() -> Int32? {
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            return nil
        }
        return process.terminationStatus
    }

    /// A crash: SIGKILL, no cleanup.
    public func crash() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Starts another keyjard on the same socket and database.
    public func restarted(arguments: [String]? = nil) throws -> DaemonProcess {
        try DaemonProcess(
            in: directory,
            arguments: arguments ?? extraArguments,
            environment: environment,
            launcher: launcher
        )
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
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
}

/// Runs a command to completion and returns its exit status, standard output and error.
@discardableResult
public func runCommand(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String]? = nil,
    input: String? = nil
) throws -> (status: Int32, output: String, error: String) {
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
    try process.run()
    if let input { inputPipe.fileHandleForWriting.write(Data(input.utf8)) }
    try? inputPipe.fileHandleForWriting.close()
    let errorBox = LockedBox(Data())
    let errorDone = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        errorBox.set(error.fileHandleForReading.readDataToEndOfFile())
        errorDone.signal()
    }
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    errorDone.wait()
    process.waitUntilExit()
    return (
        process.terminationStatus, String(decoding: outputData, as: UTF8.self),
        String(decoding: errorBox.get(), as: UTF8.self)
    )
}

/// Starts a program with posix_spawn, a clean signal mask and stdout/stderr to /dev/null, and
/// returns its pid. Foundation's Process passes on the calling thread's signal mask (Swift's
/// worker threads block SIGCHLD, among others), which breaks programs that wait for children.
public func spawnQuietly(_ executable: String, _ arguments: [String], environment: [String: String]) throws -> pid_t {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
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

/// Waits for a child started by `spawnQuietly` and returns its exit status (-1 if signalled).
public func waitForExit(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    // WIFEXITED / WEXITSTATUS, which Swift does not import as macros.
    return status & 0x7F == 0 ? (status >> 8) & 0xFF : -1
}

/// A child's environment: under `scripts/test --sanitize=address`, Keyjar's own programs (keyjard,
/// keyjar, the test peer) check for leaks (`KEYJAR_CHILD_ASAN_OPTIONS`), while the test runner
/// does not: its Foundation `Process` objects, hundreds of them, are kept in reference cycles
/// by swift-corelibs-foundation and would bury any real report.
public func childEnvironment(_ base: [String: String]) -> [String: String] {
    guard let options = ProcessInfo.processInfo.environment["KEYJAR_CHILD_ASAN_OPTIONS"] else { return base }
    var environment = base
    environment["ASAN_OPTIONS"] = options
    return environment
}
