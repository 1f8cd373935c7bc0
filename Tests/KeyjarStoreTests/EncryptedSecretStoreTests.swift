import Crypto
import Foundation
import KeyjarCore
import KeyjarSealing
import KeyjarTestSupport
import Testing

@testable import KeyjarStore

/// The encrypted secrets file on real files. scrypt runs at its test cost (N = 2^10): the
/// passphrase's cost is a parameter, and what it protects is the same at any cost.
@Suite("EncryptedSecretStore")
struct EncryptedSecretStoreTests {
    private static let cost = PassphraseKey.Cost.cheap(rounds: 1 << 10)
    private let passphrase = "correct horse battery staple"
    private let space = ProtectionSpace(
        host: "git.example",
        protocol: "https",
        realm: "repos",
        authenticationMethod: .httpBasic
    )

    private func newStore(
        _ directory: TemporaryDirectory,
        name: String = "secrets.sealed"
    ) throws
        -> EncryptedSecretStore
    {
        let store = try EncryptedSecretStore(path: directory.path(name), cost: Self.cost)
        try store.create(passphrase: passphrase)
        return store
    }

    private func bytes(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    private func code(of body: () throws -> Void) -> SecretStoreError.Code? {
        do {
            try body()
            return nil
        } catch {
            return (error as? SecretStoreError)?.code
        }
    }

    @Test func sharedStoreBehaviour() throws {
        let directory = try TemporaryDirectory()
        try checkCommonBehaviour(of: newStore(directory))
    }

    /// Locked, a secret is neither read nor stored, at once and without a change to the file;
    /// what needs no secret (the listing, a removal) still works. A wrong passphrase changes
    /// nothing; the right one opens what was stored, in this instance or a new one.
    @Test func lockedItAnswersAtOnceAndLosesNothing() throws {
        let directory = try TemporaryDirectory()
        let store = try newStore(directory)
        try store.storePassword("alice-pw", for: space, user: "alice")
        try store.storePassword("bob-pw", for: space, user: "bob")
        store.lock()
        #expect(!store.isUnlocked)
        let before = try bytes(store.path)

        #expect(code { _ = try store.password(for: space, user: "alice") } == .fileLocked)
        #expect(code { try store.storePassword("new", for: space, user: "alice") } == .fileLocked)
        #expect(code { try store.unlock(passphrase: "wrong") } == .wrongPassphrase)
        #expect(!store.isUnlocked)
        #expect(try bytes(store.path) == before)
        guard case .unavailable(let reason) = store.health() else {
            Issue.record("a locked store reports itself available")
            return
        }
        #expect(reason.contains("keyjar unlock"), "\(reason)")

        #expect(Set(try store.keys().map(\.user)) == ["alice", "bob"])
        #expect(try store.removePassword(for: space, user: "bob"))

        let again = try EncryptedSecretStore(path: store.path, cost: Self.cost)
        try again.unlock(passphrase: passphrase)
        #expect(try again.password(for: space, user: "alice") == "alice-pw")
        #expect(try again.password(for: space, user: "bob") == nil)
        try store.unlock(passphrase: passphrase)
        #expect(try store.password(for: space, user: "alice") == "alice-pw")
        #expect(store.health() == .available(backend: "encrypted file \(store.path)"))
    }

    /// Reading or storing a secret is a use, which an idle timeout's lock must not overtake;
    /// listing and removing, which need no key, are not.
    @Test func anIdleLockYieldsToAUseSinceItsLook() throws {
        let directory = try TemporaryDirectory()
        let store = try newStore(directory)
        let unlocked = try #require(store.lastUse)
        try store.storePassword("alice-pw", for: space, user: "alice")
        let stored = try #require(store.lastUse)
        #expect(stored > unlocked)
        _ = try store.keys()
        _ = try store.removePassword(for: space, user: "nobody")
        #expect(store.lastUse == stored)
        #expect(try store.password(for: space, user: "alice") == "alice-pw")
        let read = try #require(store.lastUse)
        #expect(read > stored)

        #expect(!store.lock(ifUnusedSince: stored))
        #expect(store.isUnlocked)
        #expect(store.lock(ifUnusedSince: read))
        #expect(!store.isUnlocked)
        #expect(store.lastUse == nil)
        #expect(!store.lock(ifUnusedSince: read))
    }

    /// Neither a secret, nor the passphrase, nor the data key, nor the key that seals it is in
    /// the file in clear — as bytes, base64 or hex.
    @Test func noSecretAndNoKeyIsInTheFile() throws {
        let directory = try TemporaryDirectory()
        let store = try newStore(directory)
        let secrets = ["pä55-wörd-of-alice", "ghp_0123456789abcdefABCDEF", "refresh-token-kept-beside"]
        try store.storePassword(secrets[0], for: space, user: "alice")
        try store.storePassword(secrets[1], for: space, user: "bob")
        try store.storeSecret(secrets[2], .refreshToken, for: space, user: "bob")

        let contents = try bytes(store.path)
        let file = try SealedSecretsFile(bytes: contents, path: store.path)
        let dataKey = try file.dataKey(passphrase: passphrase, path: store.path).withUnsafeBytes { Array($0) }
        let sealingKey = try file.kdf.key(passphrase: passphrase).withUnsafeBytes { Array($0) }
        var needles = (secrets + [passphrase]).map { Array($0.utf8) }
        for key in [dataKey, sealingKey] {
            needles += [
                key, Array(Data(key).base64EncodedString().utf8),
                Array(key.map { String(format: "%02x", $0) }.joined().utf8),
            ]
        }
        needles += secrets.map { Array(Data($0.utf8).base64EncodedString().utf8) }
        for needle in needles {
            #expect(!contents.contains(needle), "the file holds \(needle.count) bytes of a secret or key in clear")
        }
    }

    /// A sealed value changed, or moved to another item, does not open, and the error names
    /// the item, never a secret; the other items still open.
    @Test func aChangedOrMovedValueDoesNotOpen() throws {
        let directory = try TemporaryDirectory()
        let store = try newStore(directory)
        try store.storePassword("alice-pw", for: space, user: "alice")
        try store.storePassword("bob-pw", for: space, user: "bob")
        try store.storePassword("carol-pw", for: space, user: "carol")
        var file = try SealedSecretsFile(bytes: try bytes(store.path), path: store.path)
        let aliceSealed = file.items[0].sealed
        file.items[0].sealed = file.items[1].sealed
        file.items[1].sealed = aliceSealed
        file.items[2].sealed[file.items[2].sealed.count / 2] ^= 0x01
        try PrivateFile.replace(store.path, with: file.bytes)

        for user in ["alice", "bob", "carol"] {
            do {
                let password = try store.password(for: space, user: user)
                Issue.record("\(user)'s altered secret opened as \(password ?? "nil")")
            } catch let error as SecretStoreError {
                #expect(error.code == .unreadableFile)
                #expect(!error.description.contains("-pw"), "\(error)")
                #expect(error.description.contains(user), "\(error)")
            }
        }
        try store.storePassword("dave-pw", for: space, user: "dave")
        #expect(try store.password(for: space, user: "dave") == "dave-pw")
    }

    /// A key kept in the session keyring opens the file in a new instance (a restarted
    /// keyjard) with the unlock's idle timeout; a key kept for a file since replaced opens
    /// nothing and is forgotten; a forgotten key is none.
    @Test func aKeptKeyOpensItsFileOnlyWhileKept() throws {
        let directory = try TemporaryDirectory()
        let store = try newStore(directory)
        try store.storePassword("alice-pw", for: space, user: "alice")
        try store.keepInSessionKeyring(lockAfterIdle: 900)
        defer { store.forgetInSessionKeyring() }

        let restarted = try EncryptedSecretStore(path: store.path, cost: Self.cost)
        #expect(try restarted.unlockFromSessionKeyring() == .init(lockAfterIdle: 900))
        #expect(try restarted.password(for: space, user: "alice") == "alice-pw")

        store.lock()
        #expect(code { try store.keepInSessionKeyring(lockAfterIdle: nil) } == nil)
        #expect(try EncryptedSecretStore(path: store.path, cost: Self.cost).unlockFromSessionKeyring() != nil)

        let other = try EncryptedSecretStore(path: directory.path("other.sealed"), cost: Self.cost)
        try other.create(passphrase: "another passphrase")
        try other.storePassword("theirs", for: space, user: "alice")
        #expect(rename(other.path, store.path) == 0)
        let replaced = try EncryptedSecretStore(path: store.path, cost: Self.cost)
        #expect(try replaced.unlockFromSessionKeyring() == nil)
        #expect(!replaced.isUnlocked)
        try replaced.unlock(passphrase: "another passphrase")
        try replaced.keepInSessionKeyring(lockAfterIdle: nil)
        #expect(try EncryptedSecretStore(path: store.path, cost: Self.cost).unlockFromSessionKeyring() == .init())
        replaced.forgetInSessionKeyring()
        #expect(try EncryptedSecretStore(path: store.path, cost: Self.cost).unlockFromSessionKeyring() == nil)
    }

    /// A file put in its place with another data key (a copy restored over it, another
    /// user's file) is never written with the key in memory: the store locks itself.
    @Test func aFileReplacedSinceTheUnlockLocksTheStore() throws {
        let directory = try TemporaryDirectory()
        let store = try newStore(directory)
        try store.storePassword("mine", for: space, user: "alice")
        let other = try EncryptedSecretStore(path: directory.path("other.sealed"), cost: Self.cost)
        try other.create(passphrase: "another passphrase")
        try other.storePassword("theirs", for: space, user: "alice")
        #expect(rename(other.path, store.path) == 0)

        #expect(code { _ = try store.password(for: space, user: "alice") } == .fileLocked)
        #expect(!store.isUnlocked)
        #expect(code { try store.storePassword("mine-again", for: space, user: "alice") } == .fileLocked)
        #expect(code { try store.unlock(passphrase: passphrase) } == .wrongPassphrase)
        try store.unlock(passphrase: "another passphrase")
        #expect(try store.password(for: space, user: "alice") == "theirs")
    }

    /// A new passphrase opens every item as it was; the old one opens nothing.
    @Test func aNewPassphraseKeepsEveryItem() throws {
        let directory = try TemporaryDirectory()
        let store = try newStore(directory)
        try store.storePassword("alice-pw", for: space, user: "alice")
        let itemsBefore = try SealedSecretsFile(bytes: try bytes(store.path), path: store.path).items.map(\.sealed)
        #expect(code { try store.changePassphrase(from: "wrong", to: "new one") } == .wrongPassphrase)
        try store.changePassphrase(from: passphrase, to: "new one")
        #expect(
            try SealedSecretsFile(bytes: try bytes(store.path), path: store.path).items.map(\.sealed) == itemsBefore
        )

        let again = try EncryptedSecretStore(path: store.path, cost: Self.cost)
        #expect(code { try again.unlock(passphrase: passphrase) } == .wrongPassphrase)
        try again.unlock(passphrase: "new one")
        #expect(try again.password(for: space, user: "alice") == "alice-pw")
    }

    /// An existing file is never replaced by a new one; there is none to unlock before it is made.
    @Test func aFileIsCreatedOnceAndUnlockedAfter() throws {
        let directory = try TemporaryDirectory()
        let store = try EncryptedSecretStore(path: directory.path("secrets.sealed"), cost: Self.cost)
        #expect(try !store.exists())
        #expect(code { try store.unlock(passphrase: passphrase) } == .unreadableFile)
        #expect(code { try store.storePassword("x", for: space, user: "alice") } == .fileLocked)
        try store.create(passphrase: passphrase)
        #expect(try store.exists() && store.isUnlocked)
        try store.storePassword("kept", for: space, user: "alice")
        #expect(code { try store.create(passphrase: "another") } == .unreadableFile)
        store.lock()
        try store.unlock(passphrase: passphrase)
        #expect(try store.password(for: space, user: "alice") == "kept")
    }

    /// The file is 0600 from its first byte; one others may read, or a symbolic link, is refused.
    @Test func theFileIsPrivateAndASymbolicLinkIsRefused() throws {
        let directory = try TemporaryDirectory()
        let store = try newStore(directory)
        var info = stat()
        #expect(lstat(store.path, &info) == 0 && info.st_mode & 0o777 == 0o600)

        #expect(chmod(store.path, 0o644) == 0)
        #expect(code { _ = try EncryptedSecretStore(path: store.path, cost: Self.cost) } == .insecureFile)
        #expect(code { _ = try store.password(for: space, user: "alice") } == .insecureFile)
        // Never taken for "no file yet", which would ask for a new passphrase.
        #expect(code { _ = try store.exists() } == .insecureFile)
        #expect(chmod(store.path, 0o600) == 0)

        let link = directory.path("link.sealed")
        #expect(symlink(store.path, link) == 0)
        #expect(code { _ = try EncryptedSecretStore(path: link, cost: Self.cost) } == .insecureFile)
    }

    /// Parameters that would make a reader spend more than 256 MiB are refused before scrypt runs.
    @Test func aHostileKeyDerivationIsRefusedBeforeItRuns() throws {
        let directory = try TemporaryDirectory()
        let store = try newStore(directory)
        var file = try SealedSecretsFile(bytes: try bytes(store.path), path: store.path)
        file.kdf.rounds = 1 << 20
        file.kdf.blockSize = 32
        try PrivateFile.replace(store.path, with: file.bytes)
        #expect(code { _ = try EncryptedSecretStore(path: store.path, cost: Self.cost) } == .unreadableFile)
        store.lock()
        #expect(code { try store.unlock(passphrase: passphrase) } == .unreadableFile)
    }

    /// Any damage to the file is a typed error or a file that reads; never a crash, and never
    /// a secret other than the one stored.
    @Test func aDamagedFileIsATypedError() throws {
        let directory = try TemporaryDirectory()
        let store = try newStore(directory)
        try store.storePassword("alice-pw", for: space, user: "alice")
        try store.storeSecret("refresh", .refreshToken, for: space, user: "alice")
        let original = try bytes(store.path)
        let dataKey = try SealedSecretsFile(bytes: original, path: store.path).dataKey(
            passphrase: passphrase,
            path: store.path
        )
        var random = SplitMix64(seed: 0x5EA1_ED)
        var parsed = 0
        for _ in 0..<3000 {
            var damaged = original
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let position = Int.random(in: 0..<damaged.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: damaged[position] = UInt8.random(in: 0...255, using: &random)
                case 1: damaged.remove(at: position)
                default: damaged.insert(UInt8.random(in: 0x20...0x7E, using: &random), at: position)
                }
            }
            do {
                let file = try SealedSecretsFile(bytes: damaged, path: "damaged")
                parsed += 1
                for item in file.items {
                    if let opened = try? SealedSecretsFile.open(
                        item.sealed,
                        for: item.key,
                        with: dataKey,
                        path: "damaged"
                    ) {
                        #expect(["alice-pw", "refresh"].contains(opened))
                    }
                }
            } catch let error as SecretStoreError {
                #expect(error.code == .unreadableFile)
            }
        }
        // Some damage (to whitespace, say) leaves a file that reads: both paths were taken.
        #expect(parsed > 0 && parsed < 3000, "\(parsed)")
    }

    /// The key in memory is on a page locked against swapping wherever the limit allows one.
    @Test func theKeyIsLockedInMemoryWhereTheLimitAllows() throws {
        var limit = rlimit()
        #expect(getrlimit(__rlimit_resource_t(__RLIMIT_MEMLOCK.rawValue), &limit) == 0)
        let key = ProtectedKey(SymmetricKey(size: .bits256))
        if limit.rlim_cur >= rlim_t(sysconf(Int32(_SC_PAGESIZE))) {
            #expect(key.isLockedInMemory)
        }
        let copy = key.withKey { $0.withUnsafeBytes { Array($0) } }
        #expect(copy.count == 32 && copy != [UInt8](repeating: 0, count: 32))
    }
}
