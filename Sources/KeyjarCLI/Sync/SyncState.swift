import Foundation
import Glibc
import KeyjarCodec
import KeyjarCore
import KeyjarPlatform

/// What `keyjar sync` remembers between runs, in `$XDG_STATE_HOME/keyjar/sync.json` (0600, in a
/// private directory, replaced whole): the store it syncs with, and for each entry both sides
/// held alike after the last sync, the entry's git blob, the item it is and when Keyjar's item
/// had last changed. The blob tells whether the store's side changed since; Keyjar's time of
/// change, or else the version the blob holds (in git's history), whether Keyjar's did
/// (``SyncDecision``). No secret is in it.
struct SyncState {
    struct Synced: Equatable {
        /// The entry's git blob id when last synced: both sides held what it holds.
        var blob: String
        /// The item the entry is (``SyncState/key(of:user:)``, ``SyncedCookies/key(of:)``).
        var key: String
        /// When Keyjar's item had last changed then: while it still says so, it holds what the
        /// entry holds, and the sync need not decrypt the entry to tell.
        var modified: Double?
    }

    var store: String
    var entries: [String: Synced] = [:]

    static var path: String { XDGDirectories().stateHome + "/keyjar/sync.json" }

    /// One string per credential (its space and user), to pair an entry with its credential.
    static func key(of space: ProtectionSpace, user: String) -> String {
        [
            space.protocol, space.host, String(space.port), space.realm ?? "", space.authenticationMethod.rawValue,
            space.proxyType.rawValue, user,
        ].joined(separator: "\t")
    }

    /// Takes the sync lock (`sync.lock` beside the state), waiting while another sync holds
    /// it. Its descriptor is inherited by the git and gpg a sync starts (it is not
    /// close-on-exec): a sync that was killed holds the lock until its last child has ended,
    /// so the next one never meets a git still at work. Held until the descriptor returned is
    /// closed, or this process ends.
    @discardableResult
    static func lock() throws(Failure) -> Int32 {
        let directory = (path as NSString).deletingLastPathComponent
        do {
            try PrivateDirectory.makeIfMissing(directory)
        } catch {
            throw Failure(description: "cannot make \(directory): \(error)")
        }
        let descriptor = open(directory + "/sync.lock", O_RDWR | O_CREAT | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw Failure(description: "cannot open \(directory)/sync.lock: \(String(cString: strerror(errno)))")
        }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                close(descriptor)
                throw Failure(description: "cannot lock \(directory)/sync.lock: \(String(cString: strerror(errno)))")
            }
        }
        return descriptor
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// The state written last; nil when there is none (`keyjar sync init` not run).
    static func load() throws(Failure) -> SyncState? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        guard let json = JSONReader.parse(Array(data)) else { throw Failure(description: "\(path) is not JSON") }
        do {
            var state = SyncState(store: try json.string("store"))
            for (entry, value) in try json.member("entries").members() {
                state.entries[entry] = Synced(
                    blob: try value.string("blob"),
                    key: try value.string("key"),
                    modified: try value.optionalDouble("modified")
                )
            }
            return state
        } catch {
            throw Failure(description: "\(path) is not keyjar sync's state: \(error)")
        }
    }

    /// Writes the state: a new file, synced, renamed over the old one.
    func save() throws(Failure) {
        let directory = (Self.path as NSString).deletingLastPathComponent
        do {
            try PrivateDirectory.makeIfMissing(directory)
        } catch {
            throw Failure(description: "cannot make \(directory): \(error)")
        }
        let json = JSONValue.object([
            ("version", .integer(1)),
            ("store", .string(store)),
            (
                "entries",
                .object(
                    entries.sorted { $0.key < $1.key }.map { path, synced in
                        (
                            path,
                            JSONValue.object(omittingAbsent: [
                                "blob": .string(synced.blob), "key": .string(synced.key),
                                "modified": synced.modified.map(JSONValue.number(of:)),
                            ])
                        )
                    }
                )
            ),
        ])
        let temporary = Self.path + ".keyjar-new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw Failure(description: "cannot write \(temporary): \(String(cString: strerror(errno)))")
        }
        let failure = FileDescriptor.writeAll(json.encoded(.readable) + [0x0A], to: descriptor)
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard failure == nil, synced, rename(temporary, Self.path) == 0 else {
            unlink(temporary)
            throw Failure(description: "cannot write \(Self.path): \(String(cString: strerror(failure ?? errno)))")
        }
    }
}
