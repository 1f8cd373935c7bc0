import Foundation
import KeyjarCore
import KeyjarLocks
import KeyjarTestSupport
import Testing

@testable import Keyjar
@testable import KeyjarConnection

/// Keyjar's own listeners (`KeyjarClient.addListener`): told of every change in order, on
/// the thread that applied it, without NotificationCenter; the process listens exactly while
/// one is in place.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct KeyjarListenerTests {
    /// Another process's changes arrive live (nobody looks up meanwhile), this process's own
    /// before its write returns, all in sequence order; nothing is posted on NotificationCenter
    /// for a client that only has listeners.
    @Test func aListenerHearsEveryChangeInOrderWithoutNotificationCenter() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let listening = try storage(for: daemon)
        let other = try storage(for: daemon)
        let heard = Locked<[UInt64]>([])
        #expect(!listening.client.isListening)
        let listener = listening.client.addListener { change in
            guard case .event(let event) = change else { return }
            heard.withLock { $0.append(event.sequence) }
        }
        let posted = Locked(0)
        let observer = NotificationCenter.default.addObserver(
            forName: KeyjarNotifications.cookiesChanged,
            object: listening.client,
            queue: nil
        ) { _ in posted.withLock { $0 += 1 } }
        defer { NotificationCenter.default.removeObserver(observer) }
        #expect(await eventually { listening.client.isListening })
        let first = listening.client.sequence

        for index in 0..<20 {
            let url = try #require(URL(string: "https://other\(index).example/"))
            _ = try await other.storeCookies(fromResponseHeaders: ["o=\(index)"], for: url, mainDocumentURL: nil)
        }
        // Live: the reader thread applies and announces them with no lookup in this process.
        #expect(await eventually { heard.withLock { $0.count } == 20 })

        let own = try #require(URL(string: "https://own.example/"))
        _ = try await listening.storeCookies(fromResponseHeaders: ["mine=1"], for: own, mainDocumentURL: nil)
        let sequence = listening.client.sequence
        #expect(heard.withLock { $0.last } == sequence, "told before the write returned")
        #expect(heard.withLock { $0 } == Array((first + 1)...(first + 21)))
        #expect(posted.withLock { $0 } == 0)
        listener.cancel()
    }

    /// After `cancel`, or once the listener is released, its body is not called again and the
    /// process stops listening (keyjard pushes nothing more to it).
    @Test func aCancelledOrReleasedListenerIsNotCalledAndTheProcessStopsListening() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let listening = try storage(for: daemon)
        let writer = try storage(for: daemon)
        let url = try #require(URL(string: "https://quiet.example/"))
        for release in [false, true] {
            let calls = Locked(0)
            var listener: KeyjarListener? = listening.client.addListener { _ in calls.withLock { $0 += 1 } }
            #expect(await eventually { listening.client.isListening })
            _ = try await writer.storeCookies(
                fromResponseHeaders: ["before=\(release)"],
                for: url,
                mainDocumentURL: nil
            )
            #expect(await eventually { calls.withLock { $0 } == 1 })
            if release { listener = nil } else { listener?.cancel() }
            #expect(await eventually { !listening.client.isListening })
            _ = try await writer.storeCookies(fromResponseHeaders: ["after=\(release)"], for: url, mainDocumentURL: nil)
            // A lookup catches up and applies the change: it is announced to nobody.
            #expect(listening.cookieHeader(for: url)?.contains("after=\(release)") == true)
            #expect(calls.withLock { $0 } == 1)
            _ = listener
        }
    }

    /// A cancel holds for changes already applied and waiting to be announced: the first
    /// listener cancels the second while the same change is being announced (oldest listener
    /// first), and the second is not told of it.
    @Test func aCancelHoldsForAChangeAlreadyBeingAnnounced() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let listening = try storage(for: daemon)
        let second = Locked<KeyjarListener?>(nil)
        let heardBySecond = Locked(0)
        let heardByFirst = Locked(0)
        let first = listening.client.addListener { _ in
            heardByFirst.withLock { $0 += 1 }
            second.withLock { $0 }?.cancel()
        }
        second.withLock { $0 = listening.client.addListener { _ in heardBySecond.withLock { $0 += 1 } } }
        let url = try #require(URL(string: "https://cancel.example/"))
        _ = try await listening.storeCookies(fromResponseHeaders: ["a=1"], for: url, mainDocumentURL: nil)
        _ = try await listening.storeCookies(fromResponseHeaders: ["b=1"], for: url, mainDocumentURL: nil)
        #expect(heardByFirst.withLock { $0 } == 2)
        #expect(heardBySecond.withLock { $0 } == 0)
        first.cancel()
    }

    /// A listener runs with no lock of the client held: it can write through the same client
    /// and gets its reply (the thread that would read it is the one running the listener).
    @Test func aListenerThatWritesGetsItsReply() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let configuration = KeyjarClient.Configuration(
            socketPath: daemon.socketPath,
            autoStart: false,
            requestTimeout: 5
        )
        let watcher = SharedCookieStorage(client: try KeyjarClient(configuration: configuration))
        let writer = try storage(for: daemon)
        let echo = try #require(URL(string: "https://echo.example/"))
        let outcome = Locked<String?>(nil)
        let listener = watcher.client.addListener { _ in
            guard outcome.withLock({ $0 == nil }) else { return }
            outcome.withLock { $0 = "writing" }
            let result: String
            do {
                result = try watcher.storeCookies(fromResponseHeaders: ["echo=1"], for: echo, mainDocumentURL: nil)
                    .map(\.description).joined(separator: ",")
            } catch {
                result = "\(error)"
            }
            outcome.withLock { $0 = result }
        }
        #expect(await eventually { watcher.client.isListening })
        _ = try await writer.storeCookies(
            fromResponseHeaders: ["ping=1"],
            for: try #require(URL(string: "https://ping.example/")),
            mainDocumentURL: nil
        )
        #expect(await eventually { outcome.withLock { $0 } != nil && outcome.withLock { $0 } != "writing" })
        #expect(outcome.withLock { $0 } == "stored")
        #expect(writer.cookieHeader(for: echo) == "echo=1")
        listener.cancel()
    }

    /// A one-shot client has no replica: adding a listener does not make it listen, and the
    /// body is never called, whatever changes.
    @Test func aOneShotClientsListenerIsNeverCalled() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let oneShot = try KeyjarClient(
            configuration: .init(socketPath: daemon.socketPath, autoStart: false, keepsReplica: false)
        )
        let calls = Locked(0)
        let listener = oneShot.addListener { _ in calls.withLock { $0 += 1 } }
        let url = try #require(URL(string: "https://one-shot.example/"))
        try oneShot.storeCookies(["a=1"], for: url)
        #expect(try oneShot.cookieHeader(for: url) == "a=1")
        #expect(!oneShot.isListening)
        #expect(calls.withLock { $0 } == 0)
        listener.cancel()
    }
}
