public import Crypto
import CryptoExtras

/// How a key is derived from a passphrase: scrypt (RFC 7914) with its cost and salt, as a file
/// records them. Keyjar's backups and its encrypted secrets file both derive their keys here.
///
/// scrypt is memory-hard: each try of a passphrase costs `128 · blockSize · rounds ·
/// parallelism` bytes of memory as well as time, so a guesser's hardware buys far fewer tries
/// than with a fast hash. A file's parameters are checked before scrypt runs, so a hostile file
/// can make a reader spend at most ``maximumMemory`` and a few seconds.
public struct PassphraseKey: Sendable, Hashable {
    /// scrypt's N: a power of two.
    public var rounds: Int
    /// scrypt's r.
    public var blockSize: Int
    /// scrypt's p.
    public var parallelism: Int
    public var salt: [UInt8]

    /// What any file may ask of a reader: 256 MiB.
    public static let maximumMemory = 256 << 20

    /// How much it costs per try, chosen by what the passphrase protects and how often it is typed.
    public enum Cost: Sendable {
        /// N = 2^15, r = 8: 32 MiB and about 0.1 s here. A backup is written and read rarely, and
        /// often on a small machine.
        case backup
        /// N = 2^17, r = 8: 128 MiB and about 0.4 s here, OWASP's recommendation for scrypt. The
        /// passphrase of the secrets file is typed once per login session, so a try may cost
        /// more; a stolen file then costs a guesser four times a backup's price per guess.
        case secrets
        /// N as given: for tests and fuzz targets, which derive keys thousands of times. No
        /// command writes it.
        case cheap(rounds: Int)

        var rounds: Int {
            switch self {
            case .backup: 1 << 15
            case .secrets: 1 << 17
            case .cheap(let rounds): rounds
            }
        }
    }

    public init(rounds: Int, blockSize: Int, parallelism: Int, salt: [UInt8]) {
        self.rounds = rounds
        self.blockSize = blockSize
        self.parallelism = parallelism
        self.salt = salt
    }

    /// New parameters at `cost`, with a fresh random 16-byte salt.
    public init(cost: Cost) {
        var generator = SystemRandomNumberGenerator()
        self.init(
            rounds: cost.rounds,
            blockSize: 8,
            parallelism: 1,
            salt: (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        )
    }

    /// The memory one derivation takes.
    public var memory: Int { 128 * blockSize * rounds * parallelism }

    /// Why these parameters are not ones Keyjar derives with, or nil when they are.
    public var problem: String? {
        guard rounds >= 2, rounds <= 1 << 20, rounds & (rounds - 1) == 0 else {
            return "scrypt's N must be a power of two from 2 to 2^20"
        }
        guard (1...32).contains(blockSize), (1...16).contains(parallelism) else {
            return "scrypt's r must be 1 to 32 and p 1 to 16"
        }
        guard memory <= Self.maximumMemory else { return "scrypt would need more than 256 MiB" }
        guard (8...64).contains(salt.count) else { return "the salt must be 8 to 64 bytes" }
        return nil
    }

    /// The 256-bit key `passphrase` gives under these parameters.
    /// - Throws: ``PassphraseKeyError`` when the parameters are out of bounds (``problem``) or
    ///   scrypt fails.
    public func key(passphrase: String) throws(PassphraseKeyError) -> SymmetricKey {
        if let problem { throw PassphraseKeyError(reason: problem) }
        do {
            return try KDF.Scrypt.deriveKey(
                from: Array(passphrase.utf8),
                salt: salt,
                outputByteCount: 32,
                rounds: rounds,
                blockSize: blockSize,
                parallelism: parallelism,
                maxMemory: memory + (1 << 20)
            )
        } catch {
            throw PassphraseKeyError(reason: "scrypt failed: \(error)")
        }
    }
}

/// Parameters that Keyjar does not derive with, or a derivation that failed.
public struct PassphraseKeyError: Error, Sendable, CustomStringConvertible {
    public var reason: String
    public var description: String { reason }
}
