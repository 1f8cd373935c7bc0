import Crypto
import FoundationEssentials
import KeyjarSealing

/// The backup file (`keyjar backup`): one file with a store's cookies, policy, credential
/// records and their secrets, every byte after its header encrypted under a passphrase.
///
/// ```
/// keyjar-backup 1\n
/// {"kdf":"scrypt","n":32768,"r":8,"p":1,"salt":"…","check":"…"}\n
/// chunk…   (4-byte big-endian length, then an AES-256-GCM sealed box: ciphertext and tag)
/// ```
///
/// The key is scrypt(passphrase, salt); `check` (an HMAC of a fixed text under the key) tells
/// a wrong passphrase from a damaged file before anything is read. Each chunk holds at most
/// 64 KiB of the plaintext; its nonce is its number and whether it is the last, and the header
/// is its authenticated data, so chunks cannot be reordered, dropped, cut off at a chunk's end
/// or moved to another file. The plaintext is JSON Lines (``BackupItem``), ending with the
/// counts it holds. Streamed both ways: neither side holds more than a chunk of it.
public enum BackupFormat {
    public static let magic = "keyjar-backup 1"
    static let chunkPlaintextLimit = 64 * 1024
    static let tagBytes = 16
    static let checkText = Array("keyjar-backup passphrase check".utf8)

    /// The header after the magic line: how the key is derived and checked.
    struct Header {
        var kdf: PassphraseKey
        var check: [UInt8]

        /// The two header lines, as written and as authenticated.
        var bytes: [UInt8] {
            let salt = Data(kdf.salt).base64EncodedString()
            let json =
                #"{"kdf":"scrypt","n":\#(kdf.rounds),"r":\#(kdf.blockSize),"p":\#(kdf.parallelism),"salt":"\#(salt)","check":"\#(Data(check).base64EncodedString())"}"#
            return Array((magic + "\n" + json + "\n").utf8)
        }
    }

    static func key(passphrase: String, header: Header) throws(BackupError) -> SymmetricKey {
        // Bounded before scrypt runs (PassphraseKey): a hostile header may make restore spend at
        // most 256 MiB and a few seconds before the passphrase is found not to open it.
        do {
            return try header.kdf.key(passphrase: passphrase)
        } catch {
            throw BackupError(.notABackup, "its key derivation is not one Keyjar writes (\(error))")
        }
    }

    static func check(for key: SymmetricKey) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: checkText, using: key))
    }

    /// Chunk `index`'s nonce: its number, and whether it is the last.
    static func nonce(index: UInt64, final: Bool) throws -> AES.GCM.Nonce {
        var bytes = [UInt8](repeating: 0, count: 12)
        let value = index << 1 | (final ? 1 : 0)
        for position in 0..<8 { bytes[4 + position] = UInt8(truncatingIfNeeded: value >> (8 * (7 - position))) }
        return try AES.GCM.Nonce(data: bytes)
    }
}

/// Why a backup cannot be written or read; never carries a secret.
public struct BackupError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// Not a file `keyjar backup` wrote, or of a version this Keyjar does not read.
        case notABackup
        /// The passphrase does not open it.
        case wrongPassphrase
        /// Opened, but changed, cut short or damaged since it was written.
        case damaged
        /// The file cannot be read or written.
        case io
    }

    public var code: Code
    public var detail: String

    public init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String {
        switch code {
        case .notABackup: "not a Keyjar backup: \(detail)"
        case .wrongPassphrase: "the passphrase does not open this backup"
        case .damaged: "the backup is damaged: \(detail)"
        case .io: detail
        }
    }
}
