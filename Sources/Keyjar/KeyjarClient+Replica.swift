import Foundation
import KeyjarCore
import KeyjarLocks
import KeyjarProtocol

extension KeyjarClient {
    /// What the replica holds.
    struct Replica: Sendable {
        var jar: CookieJar
        var credentials: [CredentialRecord] = []
        var sequence: UInt64 = 0
    }

    /// A change to announce (notification, change streams) once no lock is held, in order.
    enum Announcement: Sendable {
        case event(SequencedEvent, [AsyncStream<SequencedEvent>.Continuation], notifies: Bool)
        case resynchronised
    }

    func apply(_ snapshot: StoreSnapshot) {
        var jar = CookieJar(policy: snapshot.policy)
        for cookie in snapshot.cookies { jar.restore(cookie, isNew: true) }
        state.withLock { state in
            state.replica = Replica(jar: jar, credentials: snapshot.credentials, sequence: snapshot.sequence)
            if state.postsNotifications { state.announcements.append(.resynchronised) }
        }
    }

    func apply(_ event: SequencedEvent) {
        // An event the replica already has (replayed after a reconnect) is not announced twice.
        state.withLock { state in
            guard event.sequence > state.replica.sequence else { return }
            state.replica.sequence = event.sequence
            switch event.event {
            case .cookies(let changes):
                for change in changes {
                    switch change {
                    case .added(let cookie), .replaced(_, let cookie): state.replica.jar.restore(cookie)
                    case .removed(let cookie, _): state.replica.jar.remove(cookie.identity)
                    }
                }
            case .policy(let policy):
                state.replica.jar.policy = policy
            case .credentials(let changes):
                for change in changes { Self.apply(change, to: &state.replica.credentials) }
            }
            // Nothing to announce unless something listens (a catching-up lookup's events).
            if state.postsNotifications || !state.listeners.isEmpty {
                state.announcements.append(
                    .event(event, Array(state.listeners.values), notifies: state.postsNotifications)
                )
            }
        }
    }

    private static func apply(_ change: CredentialChange, to records: inout [CredentialRecord]) {
        let index = records.firstIndex { $0.space == change.space && $0.user == change.user }
        switch change.kind {
        case .added, .updated:
            if index == nil {
                records.append(
                    CredentialRecord(
                        space: change.space,
                        user: change.user,
                        persistence: .permanent,
                        isDefault: false,
                        created: Date().timeIntervalSince1970
                    )
                )
            }
        case .removed:
            if let index { records.remove(at: index) }
        case .defaultChanged:
            for position in records.indices where records[position].space == change.space {
                records[position].isDefault = records[position].user == change.user
            }
        }
    }

    /// Makes the pending announcements, oldest first, on this thread, unless another thread
    /// is already making them (it then makes these too). No lock is held meanwhile, so an
    /// observer may call back into the client, even write.
    func announcePending() {
        var batch = state.withLock { state -> [Announcement]? in
            guard !state.announcing, !state.announcements.isEmpty else { return nil }
            state.announcing = true
            defer { state.announcements.removeAll() }
            return state.announcements
        }
        while let current = batch {
            for announcement in current {
                switch announcement {
                case .event(let event, let listeners, let notifies):
                    for listener in listeners { listener.yield(event) }
                    if notifies { KeyjarNotifications.post(event, from: self) }
                case .resynchronised:
                    KeyjarNotifications.postResynchronised(self)
                }
            }
            batch = state.withLock { state -> [Announcement]? in
                guard !state.announcements.isEmpty else {
                    state.announcing = false
                    return nil
                }
                defer { state.announcements.removeAll() }
                return state.announcements
            }
        }
    }
}
