import Foundation
import Glibc
import Keyjar
import KeyjarTestSupport
import Testing

/// A Unix socket that accepts connections and never answers, until released: a keyjard that
/// is starting, or stuck, as a client sees it.
private final class SilentServer: Sendable {
    let path: String
    private let listener: Int32
    private let connections = AcceptedDescriptors()

    init(path: String) throws {
        self.path = path
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() { buffer[index] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard listener >= 0, bound == 0, listen(listener, 64) == 0 else {
            throw TestSupportError("cannot listen at \(path): \(String(cString: strerror(errno)))")
        }
        let descriptor = listener
        let connections = connections
        Thread.detachNewThread {
            while true {
                let connection = accept(descriptor, nil, nil)
                guard connection >= 0 else { return }
                // Not inherited by the processes other tests start.
                _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                connections.append(connection)
            }
        }
    }

    var accepted: Int { connections.all.count }

    /// Closes every connection and the listener: the clients' reads end.
    func release() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        for connection in connections.all { close(connection) }
    }
}

@Suite(.timeLimit(hangLimit))
struct AsyncCallTests {
    /// More connections than Swift's cooperative pool has threads wait on a keyjard that does
    /// not answer, and the pool still runs other work meanwhile: the async calls wait elsewhere.
    /// (Were they to wait on the pool's threads, this test's own task would run again only once
    /// their requests had timed out, and would find them over.)
    @Test func connectingWaitsWithoutHoldingTheCooperativePool() async throws {
        let directory = try TemporaryDirectory()
        let server = try SilentServer(path: directory.path("silent.sock"))
        let count = ProcessInfo.processInfo.activeProcessorCount + 2
        let configuration = KeyjarClient.Configuration(
            socketPath: server.path,
            autoStart: false,
            requestTimeout: hangSeconds
        )
        let failures = LockedCounter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<count {
                group.addTask {
                    do {
                        if index.isMultiple(of: 2) {
                            _ = try await KeyjarClient.connect(configuration: configuration)
                        } else {
                            _ = try await SharedCookieStorage.connect(configuration: configuration)
                        }
                    } catch {
                        failures.increment()
                    }
                }
            }
            // Every one of them is waiting for keyjard's hello…
            try await waitUntil("\(count) connections") { server.accepted == count }
            // …and the pool still runs a task that needs a thread of it, while they all wait.
            #expect(await Task.detached { Thread.isMainThread == false }.value)
            #expect(failures.value == 0, "connections ended before keyjard answered")
            server.release()
            try await group.waitForAll()
        }
        // Released without a hello, every connection failed (and said so, rather than hanging).
        #expect(failures.value == count)
    }
}

/// Descriptors a server thread accepted.
private final class AcceptedDescriptors: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var descriptors: [Int32] = []

    func append(_ descriptor: Int32) { lock.withLock { descriptors.append(descriptor) } }
    var all: [Int32] { lock.withLock { descriptors } }
}
