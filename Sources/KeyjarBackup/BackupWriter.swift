import Crypto
import FoundationEssentials
package import KeyjarSealing

/// Writes a backup (``BackupFormat``): ``header`` first, then the bytes each call returns, in
/// order. Only a chunk of plaintext is held at a time.
public struct BackupWriter {
    /// The file's first bytes.
    public let header: [UInt8]
    private let key: SymmetricKey
    private var pending: [UInt8] = []
    private var chunks: UInt64 = 0
    private var cookies = 0
    private var credentials = 0

    /// Derives the key from `passphrase` (about 0.1 s) under a new random salt.
    public init(passphrase: String) throws {
        try self.init(passphrase: passphrase, cost: .backup)
    }

    /// With scrypt's cost given: the fuzz targets' headers are cheap to open.
    package init(passphrase: String, cost: PassphraseKey.Cost) throws {
        var header = BackupFormat.Header(kdf: PassphraseKey(cost: cost), check: [])
        key = try BackupFormat.key(passphrase: passphrase, header: header)
        header.check = BackupFormat.check(for: key)
        self.header = header.bytes
    }

    /// Adds an item; returns the chunks it completed (often none).
    public mutating func add(_ item: BackupItem) throws -> [UInt8] {
        switch item {
        case .cookie: cookies += 1
        case .credential: credentials += 1
        case .policy: break
        case .end: return []
        }
        pending += item.encodedLine
        return try sealFullChunks()
    }

    /// The counts and the last chunk. A backup without them is read as cut short.
    public mutating func finish() throws -> [UInt8] {
        pending += BackupItem.end(cookies: cookies, credentials: credentials).encodedLine
        var bytes = try sealFullChunks()
        bytes += try seal(pending, final: true)
        pending = []
        return bytes
    }

    private mutating func sealFullChunks() throws -> [UInt8] {
        var bytes: [UInt8] = []
        // Strictly more than a chunk: the last chunk is sealed by finish(), final, never empty.
        while pending.count > BackupFormat.chunkPlaintextLimit {
            bytes += try seal(Array(pending.prefix(BackupFormat.chunkPlaintextLimit)), final: false)
            pending.removeFirst(BackupFormat.chunkPlaintextLimit)
        }
        return bytes
    }

    private mutating func seal(_ plaintext: [UInt8], final: Bool) throws -> [UInt8] {
        let box = try AES.GCM.seal(
            plaintext,
            using: key,
            nonce: try BackupFormat.nonce(index: chunks, final: final),
            authenticating: header
        )
        chunks += 1
        let sealed = Array(box.ciphertext) + Array(box.tag)
        let length = UInt32(sealed.count)
        return [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            + sealed
    }
}
