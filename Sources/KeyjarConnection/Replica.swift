import FoundationEssentials
package import KeyjarCore
import KeyjarProtocol

extension KeyjarClient {
    /// The client's copy of the store: its cookies and accept policy, its credentials' records
    /// (never a secret), and the sequence number of the last change it holds. The client keeps
    /// one under its lock and changes it only through ``apply(_:)`` and a new snapshot, so the
    /// rule for what an event does to a copy is written here once; `ReplicaTests` drives it
    /// without a socket.
    package struct Replica: Sendable {
        /// The replica's cookies and policy: read here, looked up through ``lookUp(_:)``.
        package private(set) var jar: CookieJar
        package private(set) var credentials: [CredentialRecord] = []
        package private(set) var sequence: UInt64 = 0

        /// An empty replica, before the first snapshot.
        init(jar: CookieJar) {
            self.jar = jar
        }

        /// What keyjard's snapshot holds: the whole store as of its sequence number.
        init(_ snapshot: StoreSnapshot) {
            jar = CookieJar(policy: snapshot.policy)
            for cookie in snapshot.cookies { jar.restore(cookie, isNew: true) }
            credentials = snapshot.credentials
            sequence = snapshot.sequence
        }

        /// Runs a lookup on the jar: a lookup touches the last access of the cookies it returns
        /// and the jar's caches, never what the store holds, which changes only by
        /// ``apply(_:)`` and a new snapshot.
        package mutating func lookUp<T>(_ lookup: (inout CookieJar) -> T) -> T {
            lookup(&jar)
        }

        /// Applies `event`; false (and nothing changed) when the replica already holds it, as
        /// after a reconnect that replays what it missed.
        mutating func apply(_ event: SequencedEvent) -> Bool {
            guard event.sequence > sequence else { return false }
            sequence = event.sequence
            switch event.event {
            case .cookies(let changes):
                for change in changes {
                    switch change {
                    case .added(let cookie), .replaced(_, let cookie): jar.restore(cookie)
                    case .removed(let cookie, _): jar.remove(cookie.identity)
                    }
                }
            case .policy(let policy):
                jar.policy = policy
            case .credentials(let changes):
                for change in changes { apply(change) }
            }
            return true
        }

        private mutating func apply(_ change: CredentialChange) {
            let index = credentials.firstIndex { $0.space == change.space && $0.user == change.user }
            switch change.kind {
            case .added, .updated:
                if let record = change.record {
                    if let index { credentials[index] = record } else { credentials.append(record) }
                } else if index == nil {
                    // An event without the record (protocol version 4): what it says, with the
                    // defaults of a record stored without one.
                    credentials.append(
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
                if let index { credentials.remove(at: index) }
            case .defaultChanged:
                for position in credentials.indices where credentials[position].space == change.space {
                    credentials[position].isDefault = credentials[position].user == change.user
                }
            }
        }
    }
}
