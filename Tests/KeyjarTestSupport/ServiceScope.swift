import Foundation
public import Testing

/// Something a test starts that must stop cleanly when the test ends: a keyjard, an in-process
/// server. `stopAtTestEnd` stops it if it still runs and describes what went wrong, if anything.
public protocol StoppedAtTestEnd: AnyObject, Sendable {
    func stopAtTestEnd() async -> String?
}

/// The services one test started, stopped (most recent first) when its body returns or throws.
/// A test cannot `await` in a `defer`, so the clean-stop check every test used to write there
/// lives in this one place instead.
public final class ServiceScope: Sendable {
    @TaskLocal public static var current: ServiceScope?

    private let services = LockedBox<[any StoppedAtTestEnd]>([])

    /// Adds a service; fails when the test's suite lacks the `.servicesStopCleanly` trait,
    /// since nothing would then check how the service stops.
    public static func register(_ service: any StoppedAtTestEnd) throws {
        guard let scope = current else {
            throw TestSupportError(
                "\(type(of: service)) needs its suite or test to have the .servicesStopCleanly trait"
            )
        }
        scope.services.mutate { $0.append(service) }
    }

    fileprivate func stopAll() async {
        let started = services.exchange([])
        for service in started.reversed() {
            if let failure = await service.stopAtTestEnd() { Issue.record("\(failure)") }
        }
    }
}

/// Stops every service a test started once the test ends, and records an issue for one that
/// did not stop cleanly (see `ServiceScope`).
public struct ServicesStopCleanly: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let scope = ServiceScope()
        do {
            try await ServiceScope.$current.withValue(scope) { try await function() }
        } catch {
            await scope.stopAll()
            throw error
        }
        await scope.stopAll()
    }
}

extension Trait where Self == ServicesStopCleanly {
    /// Every keyjard and in-process server the test starts is stopped when it ends and must
    /// stop cleanly.
    public static var servicesStopCleanly: Self { ServicesStopCleanly() }
}

/// A keyjard a test talks to, whether a process of its own (`DaemonProcess`) or the server
/// running inside the test process (`InProcessServer`): what a client needs to reach it.
public protocol KeyjarService: AnyObject, Sendable {
    var directory: TemporaryDirectory { get }
    var socketPath: String { get }
    var databasePath: String { get }
}
