import Foundation
import KeyjarCore
import KeyjarLocks
import KeyjarProtocol
import KeyjarTestSupport
import Synchronization
import Testing

@testable import Keyjar
@testable import KeyjarConnection

/// Callers waiting for a reply read the socket themselves when the reader thread is busy, and
/// are handed their reply by it when it waits in the socket: every message must still be
/// dispatched once and in order, and announced in order, whoever read it.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct KeyjarClientReadingTests {
    /// Several threads of one process write while another process writes too: every call gets
    /// its own reply, and the process announces every change once, in sequence order, on its
    /// stream, to its listener and on NotificationCenter alike.
    @Test func concurrentCallersAndTheReaderThreadAnnounceEveryChangeOnceInOrder() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let busy = try storage(for: daemon)
        let other = try storage(for: daemon)
        let stream = busy.client.changes()
        busy.client.startPostingNotifications()
        let posted = Locked<[UInt64]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: KeyjarNotifications.cookiesChanged,
            object: busy.client,
            queue: nil
        ) { notification in
            guard let event = notification.userInfo?[KeyjarNotifications.eventKey] as? SequencedEvent else { return }
            posted.withLock { $0.append(event.sequence) }
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let heard = Locked<[UInt64]>([])
        let listener = busy.client.addListener { change in
            guard case .event(let event) = change else { return }
            heard.withLock { $0.append(event.sequence) }
        }
        defer { listener.cancel() }
        let first = busy.client.sequence

        let threads = 4
        let writesPerThread = 150
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: threads + 1) { thread in
            let writer = thread == threads ? other : busy
            for index in 0..<writesPerThread {
                let name = "t\(thread)_\(index)"
                do {
                    guard let url = URL(string: "https://w\(thread).example/") else { return }
                    let problems = try writer.storeCookies(
                        fromResponseHeaders: ["\(name)=1"],
                        for: url,
                        mainDocumentURL: nil
                    )
                    // Read-your-writes, whichever thread took the event off the socket.
                    if problems != [.stored] || writer.cookieHeader(for: url)?.contains("\(name)=1") != true {
                        failures.withLock { $0.append("\(name): \(problems)") }
                    }
                } catch {
                    failures.withLock { $0.append("\(name): \(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)

        let total = (threads + 1) * writesPerThread
        let expected = Array((first + 1)...(first + UInt64(total)))
        var streamed: [UInt64] = []
        for await event in stream {
            streamed.append(event.sequence)
            if streamed.count == total { break }
        }
        #expect(streamed == expected)
        #expect(await eventually { posted.withLock { $0.count } >= total })
        #expect(posted.withLock { $0 } == expected)
        #expect(heard.withLock { $0 } == expected)
    }

    /// An observer runs on the thread that reads keyjard's messages; when it writes, nobody
    /// else would read the reply, so the call reads it itself instead of waiting for the
    /// request timeout.
    @Test func anObserverThatWritesGetsItsReply() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let configuration = KeyjarClient.Configuration(
            socketPath: daemon.socketPath,
            autoStart: false,
            requestTimeout: 5
        )
        let watcher = SharedCookieStorage(client: try KeyjarClient(configuration: configuration))
        watcher.client.startPostingNotifications()
        let writer = try storage(for: daemon)
        let outcome = Locked<String?>(nil)
        let observer = NotificationCenter.default.addObserver(
            forName: KeyjarNotifications.cookiesChanged,
            object: watcher.client,
            queue: nil
        ) { _ in
            guard outcome.withLock({ $0 == nil }), let url = URL(string: "https://echo.example/") else { return }
            let result: String
            do {
                result = try watcher.storeCookies(fromResponseHeaders: ["echo=1"], for: url, mainDocumentURL: nil)
                    .map(\.description).joined(separator: ",")
            } catch {
                result = "\(error)"
            }
            outcome.withLock { $0 = result }
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        _ = try await writer.storeCookies(
            fromResponseHeaders: ["ping=1"],
            for: try #require(URL(string: "https://ping.example/")),
            mainDocumentURL: nil
        )
        #expect(await eventually { outcome.withLock { $0 } != nil })
        #expect(outcome.withLock { $0 } == "stored")
        #expect(await eventually { writer.cookieHeader(for: URL(string: "https://echo.example/")!) == "echo=1" })
    }

    /// An idle client's reader thread waits in the socket holding the receive lock, but not the
    /// client: dropping the client still ends the thread and the connection.
    @Test func aDroppedIdleClientLetsGoOfItsConnection() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let probe = try WireConnection(socketPath: daemon.socketPath)
        func connectedClients() -> Int? {
            guard case .status(let status) = try? probe.call(.status) else { return nil }
            return status.connectedClients
        }
        let before = try #require(connectedClients())
        do {
            let client = try KeyjarClient(configuration: .init(socketPath: daemon.socketPath, autoStart: false))
            client.startPostingNotifications()
            #expect(client.isConnected && client.isListening)
            #expect(connectedClients() == before + 1)
            // Its reader thread has started and holds the receive lock: it waits in the socket
            // (nobody else calls this client).
            #expect(
                await eventually {
                    client.state.withLock { state in
                        if case .running = state.connection.readerThread { true } else { false }
                    }
                        && client.receiving.lock.withLockIfAvailable { _ in true } == nil
                }
            )
        }
        #expect(await eventually { connectedClients() == before })
    }
}
