import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLocks
import KeyjarTestSupport
import Testing

/// What an observer ported from `HTTPCookieStorage` or `URLCredentialStorage` hears: it
/// registers on `NotificationCenter` for the storage object, under Foundation's names.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct StorageNotificationTests {
    /// Nothing switched on: the storage's own changes are posted before the call returns, and
    /// another connection's at the storage's next lookup; the process is not made to listen.
    @Test func anObserverOfTheStorageHearsEveryChangeWithNothingSwitchedOn() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let observed = try storage(for: daemon)
        let other = try storage(for: daemon)
        let heard = Locked<[String]>([])
        let center = NotificationCenter.default
        let cookieObserver = center.addObserver(
            forName: .NSHTTPCookieManagerCookiesChanged,
            object: observed,
            queue: nil
        ) { notification in
            let event = notification.userInfo?[KeyjarNotifications.eventKey] as? SequencedEvent
            let names = event.map(Self.cookieNames) ?? ["no event"]
            heard.withLock { $0 += names }
        }
        defer { center.removeObserver(cookieObserver) }
        let policies = LockedCounter()
        let policyObserver = center.addObserver(
            forName: KeyjarNotifications.acceptPolicyChanged,
            object: observed,
            queue: nil
        ) { _ in policies.increment() }
        defer { center.removeObserver(policyObserver) }

        let url = try #require(URL(string: "https://observed.example/"))
        try await observed.storeCookies(fromResponseHeaders: ["own=1"], for: url, mainDocumentURL: nil)
        #expect(heard.withLock { $0 } == ["own"], "posted before the call returned")
        try await observed.setCookieAcceptPolicy(.noThirdParty)
        #expect(policies.value == 1)

        // Another connection's change: this process does not listen, so nothing is pushed to
        // it; its next lookup catches up and posts the change before it answers.
        try await other.storeCookies(fromResponseHeaders: ["theirs=1"], for: url, mainDocumentURL: nil)
        #expect(heard.withLock { $0 } == ["own"])
        #expect(observed.cookieHeader(for: url) == "own=1; theirs=1")
        #expect(heard.withLock { $0 } == ["own", "theirs"])
        #expect(!observed.client.isListening)
    }

    /// Through the storage's own `addObserver`, the process listens while the observer is in
    /// place: another process's change is heard without this one looking.
    @Test func anObserverAddedThroughTheStorageHearsAnotherProcessAsItChanges() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let observed = try storage(for: daemon)
        #expect(!observed.client.isListening)
        let heard = Locked<[String]>([])
        let observation = observed.addObserver(forName: .NSHTTPCookieManagerCookiesChanged) { notification in
            let event = notification.userInfo?[KeyjarNotifications.eventKey] as? SequencedEvent
            heard.withLock { $0 += event.map(Self.cookieNames) ?? ["no event"] }
        }
        #expect(await eventually { observed.client.isListening })

        let output = try await runPeer(daemon, ["set", "https://live.example/", "live=1"])
        #expect(output == "stored\n")
        #expect(await eventually { heard.withLock { $0 } == ["live"] })

        observation.cancel()
        #expect(await eventually { !observed.client.isListening })
    }

    /// A change too large to push sends the replica to a snapshot: what changed is not known,
    /// so the storage posts its names without an event.
    @Test func aStorageWhoseReplicaIsReplacedPostsWithoutAnEvent() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let observed = try storage(for: daemon)
        let heard = Locked<[String]>([])
        let center = NotificationCenter.default
        let observers = [KeyjarNotifications.cookiesChanged, KeyjarNotifications.acceptPolicyChanged].map { name in
            center.addObserver(forName: name, object: observed, queue: nil) { notification in
                let hasEvent = notification.userInfo?[KeyjarNotifications.eventKey] != nil
                heard.withLock { $0.append("\(notification.name.rawValue)\(hasEvent ? " with an event" : "")") }
            }
        }
        defer { for observer in observers { center.removeObserver(observer) } }

        let writer = try KeyjarClient(
            configuration: .init(socketPath: daemon.socketPath, autoStart: false, keepsReplica: false)
        )
        let value = String(repeating: "v", count: 500)
        let cookies = (0..<3_000).map { Cookie(name: "n", value: value, domain: "site\($0).example") }
        #expect(try writer.insertCookies(cookies).allSatisfy(\.isStored))
        #expect(observed.cookies.count == 3_000)
        // Each snapshot (the lookup may take a second one, when the first is still on its way)
        // posts both names, without an event.
        #expect(
            Set(heard.withLock { $0 }) == [
                "NSHTTPCookieManagerCookiesChangedNotification", "NSHTTPCookieManagerAcceptPolicyChangedNotification",
            ]
        )
    }

    /// A credential storage posts keyjard's credential changes with itself as object.
    @Test func aCredentialStorageObserverHearsPermanentChanges() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let storage = try credentialStorage(for: daemon)
        let host = "posted-\(UUID().uuidString.prefix(8).lowercased()).example"
        let heard = Locked<[String]>([])
        let observer = NotificationCenter.default.addObserver(
            forName: .NSURLCredentialStorageChanged,
            object: storage,
            queue: nil
        ) { notification in
            let event = notification.userInfo?[KeyjarNotifications.eventKey] as? SequencedEvent
            guard case .credentials(let changes)? = event?.event else {
                heard.withLock { $0.append("no event") }
                return
            }
            heard.withLock { $0 += changes.filter { $0.kind != .defaultChanged }.map { "\($0.kind) \($0.user)" } }
        }
        defer { NotificationCenter.default.removeObserver(observer) }

        try await storage.store(
            URLCredential(user: "alice", password: "pw-alice", persistence: .permanent),
            for: space(host)
        )
        #expect(heard.withLock { $0 } == ["added alice"])
        try await storage.removeCredential(user: "alice", for: space(host))
        #expect(heard.withLock { $0 } == ["added alice", "removed alice"])
    }

    private static func cookieNames(_ event: SequencedEvent) -> [String] {
        guard case .cookies(let changes) = event.event else { return ["not a cookie change"] }
        return changes.map(\.cookie.name)
    }
}
