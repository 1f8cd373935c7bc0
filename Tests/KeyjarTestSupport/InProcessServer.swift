import Dispatch
import Foundation
public import KeyjarServer
import Logging

/// keyjard's server running inside the test process, as Hummingbird's tests run theirs: the
/// real socket, database, secret store and protocol, with no process spawned. Protocol
/// behaviour is tested this way; what needs a process of its own (signals, crashes, command-line
/// options, start-up and shutdown) stays with `DaemonProcess`. It is stopped, and must stop
/// cleanly, when the test ends (`ServiceScope`).
public final class InProcessServer: KeyjarService, StoppedAtTestEnd, Sendable {
    public let directory: TemporaryDirectory
    public let socketPath: String
    public let databasePath: String
    private let shutdown: AsyncStream<Void>.Continuation
    private let finished = TestLatch()
    private let failure = Failure()

    /// Passwords go to a 0600 file in the test's directory unless `secrets` says otherwise.
    public init(
        secrets: ServerConfiguration.Secrets? = nil,
        configure: (inout ServerConfiguration) -> Void = { _ in }
    ) async throws {
        directory = try TemporaryDirectory()
        socketPath = directory.path("run/keyjar.sock")
        databasePath = directory.path("data/store.sqlite3")
        var configuration = ServerConfiguration(
            socketPath: socketPath,
            databasePath: databasePath,
            secrets: secrets ?? .file(path: directory.path("secrets.json"))
        )
        configure(&configuration)
        let (stream, continuation) = AsyncStream<Void>.makeStream()
        shutdown = continuation
        let ready = TestLatch()
        let finished = self.finished
        let failure = self.failure
        let logger = Logger(label: "keyjard-in-process") { _ in SwiftLogNoOpLogHandler() }
        // On a queue of its own, not Swift's cooperative pool: a test may still call the
        // synchronous client API, which blocks its thread while it waits on this very server.
        Task(executorPreference: ServerExecutor.shared) { [configuration] in
            do {
                try await KeyjarServer.run(
                    configuration: configuration,
                    logger: logger,
                    shutdown: stream,
                    ready: { _ in ready.open() }
                )
            } catch {
                failure.record(error)
                ready.open()
            }
            finished.open()
        }
        try ServiceScope.register(self)
        guard await ready.wait() else { throw TestSupportError("the server did not start") }
        if let error = failure.error { throw TestSupportError("the server failed to start: \(error)") }
    }

    /// A server that keeps passwords in the Secret Service of the test run, as a keyjard
    /// started by the tests does.
    public static func withSecretService() async throws -> InProcessServer {
        try await InProcessServer(secrets: .secretService)
    }

    /// A server with the Secret Service on the database another (stopped) one left: keyjard
    /// started again on a store it had written.
    public static func withSecretService(database: String) async throws -> InProcessServer {
        try await InProcessServer(secrets: .secretService) { $0.databasePath = database }
    }

    /// Stops it as keyjard stops on SIGTERM; true when it ended cleanly and removed its socket.
    @discardableResult
    public func stop() async -> Bool {
        shutdown.yield()
        shutdown.finish()
        guard await finished.wait() else { return false }
        return failure.error == nil && !FileManager.default.fileExists(atPath: socketPath)
    }

    public func stopAtTestEnd() async -> String? {
        if finished.isOpen { return nil }
        return await stop()
            ? nil : "the in-process server did not stop cleanly: \(failure.error.map { "\($0)" } ?? "socket left")"
    }

    /// An error from the server task, kept for the test.
    private final class Failure: @unchecked Sendable {
        // @unchecked: every access goes through `lock`.
        private let lock = NSLock()
        private var value: (any Error)?

        func record(_ error: any Error) { lock.withLock { value = error } }
        var error: (any Error)? { lock.withLock { value } }
    }
}

/// Runs the in-process servers' async code on a dispatch queue, off the cooperative pool.
private final class ServerExecutor: TaskExecutor {
    static let shared = ServerExecutor()
    private let queue = DispatchQueue(label: "keyjard-in-process", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
