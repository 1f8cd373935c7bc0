import Crypto
import KeyjarLocks
import KeyjarPlatform
import KeyjarSealing

// An unlocked key kept for keyjard's restart within the login session: in the kernel's session
// keyring (``SessionKeyring``), never in a file. What is kept names the file it opens (a hash of
// the sealed data key the file carries) and the idle timeout of its unlock; a restarted keyjard
// that finds it opens the file without asking for the passphrase, and one that finds a key for
// another file (replaced, its passphrase changed) forgets it and stays locked.
//
// Layout (69 bytes): version 1; the idle timeout in seconds, big-endian UInt32 (0: none); the
// SHA-256 of the file's sealed data key; the data key.
extension EncryptedSecretStore {
    /// What a key kept in the session keyring was unlocked with.
    package struct KeptUnlock: Sendable, Equatable {
        /// The unlock's idle timeout in seconds; nil: none.
        package var lockAfterIdle: Int?

        package init(lockAfterIdle: Int? = nil) { self.lockAfterIdle = lockAfterIdle }
    }

    private static let keptVersion: UInt8 = 1
    private static let keptSize = 1 + 4 + 32 + ProtectedKey.byteCount

    /// The key's name in the keyring: one per file.
    var keptDescription: String { "keyjar:encrypted-secrets:\(path)" }

    /// Keeps the open data key in the session keyring for a restart of keyjard, for no longer
    /// than `lockAfterIdle` seconds from now (the kernel forgets it then); nothing while locked.
    /// - Throws: ``SessionKeyring/Failure`` when the kernel refuses (a container's seccomp policy).
    package func keepInSessionKeyring(lockAfterIdle: Int?) throws {
        try unlocked.withLock { unlocked in
            guard let current = unlocked else { return }
            var payload = [UInt8](repeating: 0, count: Self.keptSize)
            defer { payload.wipe() }
            payload[0] = Self.keptVersion
            let seconds = UInt32(clamping: lockAfterIdle ?? 0)
            for index in 0..<4 { payload[1 + index] = UInt8(truncatingIfNeeded: seconds >> (24 - 8 * UInt32(index))) }
            payload.replaceSubrange(5..<37, with: Array(SHA256.hash(data: current.sealedKey)))
            current.key.withKey { key in
                key.withUnsafeBytes { bytes in
                    for index in 0..<ProtectedKey.byteCount { payload[37 + index] = bytes[index] }
                }
            }
            try payload.withUnsafeBytes { bytes in
                try SessionKeyring.store(keptDescription, payload: bytes, expiresAfter: lockAfterIdle)
            }
        }
    }

    /// Opens the file with a key kept in the session keyring by an earlier keyjard of this login
    /// session; nil when none is kept, or when the one kept is not this file's (it is forgotten).
    /// - Throws: ``SessionKeyring/Failure``, or ``SecretStoreError`` when the file cannot be read.
    package func unlockFromSessionKeyring() throws -> KeptUnlock? {
        try unlocked.withLock { unlocked -> KeptUnlock? in
            guard let file = try readFile() else { return nil }
            let fileHash = Array(SHA256.hash(data: file.sealedKey))
            let opened = try SessionKeyring.withPayload(keptDescription) { payload -> (SymmetricKey, Int?)? in
                guard payload.count == Self.keptSize, payload[0] == Self.keptVersion,
                    Array(payload[5..<37]) == fileHash
                else { return nil }
                let seconds = payload[1..<5].reduce(0) { $0 << 8 | Int($1) }
                let key = SymmetricKey(data: UnsafeRawBufferPointer(rebasing: payload[37...]))
                // The data key must open what the file holds: a hash of the sealed key could
                // only be matched by a key that was never this file's if someone wrote it there.
                if let item = file.items.first {
                    guard (try? SealedSecretsFile.open(item.sealed, for: item.key, with: key, path: path)) != nil else {
                        return nil
                    }
                }
                return (key, seconds == 0 ? nil : seconds)
            }
            guard let opened else { return nil }
            guard let (key, seconds) = opened else {
                SessionKeyring.remove(keptDescription)
                return nil
            }
            unlocked = Unlocked(key: ProtectedKey(key), kdf: file.kdf, sealedKey: file.sealedKey)
            return KeptUnlock(lockAfterIdle: seconds)
        }
    }

    /// Makes the kept key expire `seconds` from now (an idle timeout that began again).
    package func renewInSessionKeyring(seconds: Int) throws {
        try SessionKeyring.setExpiry(keptDescription, seconds: seconds)
    }

    /// Forgets the kept key: a lock, or the end of the login session.
    package func forgetInSessionKeyring() {
        SessionKeyring.remove(keptDescription)
    }
}
