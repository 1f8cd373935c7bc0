import Foundation
import KeyjarCore
import KeyjarLocks
import Synchronization

/// The `.forSession` credentials of this process: one set shared by every
/// ``SharedCredentialStorage`` and every loader of the process, for as long as it runs (Apple's
/// session credentials are per process too). Never written anywhere.
///
/// It is the one piece of process-wide mutable state in Keyjar, on purpose: a credential the
/// user typed once for this session must answer the next load whichever storage object that
/// load was given.
final class SessionCredentials: Sendable {
    static let shared = SessionCredentials()

    struct Entry: Sendable {
        var record: CredentialRecord
        var password: String
    }

    private let entries = Locked<[Entry]>([])

    /// Stores (or replaces) a user's credential for a space; the space's first becomes its
    /// default, by the model's rule, counting the `permanent` credentials the space already has.
    func store(
        user: String,
        password: String,
        for space: ProtectionSpace,
        makeDefault: Bool,
        permanent: [CredentialRecord]
    ) {
        entries.withLock { entries in
            var record = CredentialRecord(
                space: space,
                user: user,
                persistence: .forSession,
                isDefault: false,
                created: Date().timeIntervalSince1970
            )
            record.isDefault = record.becomesDefault(asked: makeDefault, stored: entries.map(\.record) + permanent)
            if record.isDefault {
                for index in entries.indices where entries[index].record.space == space {
                    entries[index].record.isDefault = false
                }
            }
            entries.removeAll { $0.record.space == space && $0.record.user == user }
            entries.append(Entry(record: record, password: password))
        }
    }

    /// Removes a user's credential from a space; true when there was one.
    func remove(user: String, from space: ProtectionSpace) -> Bool {
        entries.withLock { entries in
            let before = entries.count
            entries.removeAll { $0.record.space == space && $0.record.user == user }
            return entries.count != before
        }
    }

    var records: [CredentialRecord] { entries.withLock { $0.map(\.record) } }

    func password(user: String, space: ProtectionSpace) -> String? {
        entries.withLock { $0.first { $0.record.space == space && $0.record.user == user }?.password }
    }
}
