import Crypto
import FoundationEssentials
import KeyjarCodec
import KeyjarSealing

/// Reads a backup (``BackupFormat``) item by item from `read`, which returns up to the number
/// of bytes asked for (fewer only at the end of the file). Every length is checked before it
/// is read, so a hostile file costs at most a chunk of memory; the passphrase is checked
/// before any item is returned, and the whole file is authenticated by the time the last
/// item has been.
public struct BackupReader {
    private let key: SymmetricKey
    private let header: [UInt8]
    private let read: (Int) throws -> [UInt8]
    private var chunks: UInt64 = 0
    private var plaintext: [UInt8] = []
    private var position = 0
    private var sawFinalChunk = false
    private var finished = false
    private var counts = (cookies: 0, credentials: 0)

    public init(passphrase: String, read: @escaping (Int) throws -> [UInt8]) throws(BackupError) {
        self.read = read
        let magic = try Self.line(from: read, limit: 64)
        guard magic == BackupFormat.magic else {
            throw BackupError(
                .notABackup,
                magic.hasPrefix("keyjar-backup ")
                    ? "written by a newer Keyjar (\(magic))" : "it does not start with \(BackupFormat.magic)"
            )
        }
        let headerLine = try Self.line(from: read, limit: 1024)
        guard let json = JSONReader.parse(Array(headerLine.utf8)) else {
            throw BackupError(.notABackup, "its header is not JSON")
        }
        let header: BackupFormat.Header
        do {
            guard try json.string("kdf") == "scrypt" else { throw JSONShapeError.invalidValue.under("kdf") }
            guard let salt = Data(base64Encoded: try json.string("salt")),
                let check = Data(base64Encoded: try json.string("check"))
            else { throw JSONShapeError.invalidValue.under("salt") }
            header = BackupFormat.Header(
                kdf: PassphraseKey(
                    rounds: try json.int("n"),
                    blockSize: try json.int("r"),
                    parallelism: try json.int("p"),
                    salt: Array(salt)
                ),
                check: Array(check)
            )
        } catch {
            throw BackupError(.notABackup, "its header: \(error)")
        }
        self.header = header.bytes
        key = try BackupFormat.key(passphrase: passphrase, header: header)
        guard BackupFormat.check(for: key) == header.check else { throw BackupError(.wrongPassphrase, "") }
    }

    /// The next item, or nil after the last (the counts checked, the file read to its end).
    public mutating func next() throws(BackupError) -> BackupItem? {
        guard !finished else { return nil }
        while true {
            if let newline = plaintext[position...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(plaintext[position..<newline])
                position = newline + 1
                let item: BackupItem
                do { item = try BackupItem(line: line) } catch {
                    throw BackupError(.damaged, "an item does not read (\(error))")
                }
                switch item {
                case .cookie: counts.cookies += 1
                case .credential: counts.credentials += 1
                case .policy: break
                case .end(let cookies, let credentials):
                    guard cookies == counts.cookies, credentials == counts.credentials else {
                        throw BackupError(.damaged, "it says it holds other items than it does")
                    }
                    let after: [UInt8]
                    do { after = try read(1) } catch { throw BackupError(.io, "cannot read the backup: \(error)") }
                    guard position == plaintext.count, sawFinalChunk, after.isEmpty else {
                        throw BackupError(.damaged, "something follows its end")
                    }
                    finished = true
                    return nil
                }
                return item
            }
            guard !sawFinalChunk else { throw BackupError(.damaged, "it ends inside an item") }
            plaintext.removeFirst(position)
            position = 0
            // An item longer than the largest a store holds (a cookie is at most a few KiB, a
            // credential's secrets as large as a token) is not read on.
            guard plaintext.count <= 4 * BackupFormat.chunkPlaintextLimit else {
                throw BackupError(.damaged, "an item is longer than any Keyjar writes")
            }
            plaintext += try nextChunk()
        }
    }

    private mutating func nextChunk() throws(BackupError) -> [UInt8] {
        let prefix = try readExactly(4, what: "a chunk's length")
        let length = Int(prefix[0]) << 24 | Int(prefix[1]) << 16 | Int(prefix[2]) << 8 | Int(prefix[3])
        guard length >= BackupFormat.tagBytes, length <= BackupFormat.chunkPlaintextLimit + BackupFormat.tagBytes else {
            throw BackupError(.damaged, "a chunk's length (\(length) bytes) is not one Keyjar writes")
        }
        let sealed = try readExactly(length, what: "a chunk")
        for final in [false, true] {
            do {
                let box = try AES.GCM.SealedBox(
                    nonce: try BackupFormat.nonce(index: chunks, final: final),
                    ciphertext: sealed.prefix(length - BackupFormat.tagBytes),
                    tag: sealed.suffix(BackupFormat.tagBytes)
                )
                let opened = try AES.GCM.open(box, using: key, authenticating: header)
                chunks += 1
                sawFinalChunk = final
                return Array(opened)
            } catch {
                continue
            }
        }
        throw BackupError(.damaged, "chunk \(chunks) was changed, moved or belongs to another backup")
    }

    private func readExactly(_ count: Int, what: String) throws(BackupError) -> [UInt8] {
        let bytes: [UInt8]
        do { bytes = try read(count) } catch { throw BackupError(.io, "cannot read the backup: \(error)") }
        guard bytes.count == count else { throw BackupError(.damaged, "it is cut short (in \(what))") }
        return bytes
    }

    private static func line(from read: (Int) throws -> [UInt8], limit: Int) throws(BackupError) -> String {
        var bytes: [UInt8] = []
        while true {
            let byte: [UInt8]
            do { byte = try read(1) } catch { throw BackupError(.io, "cannot read the backup: \(error)") }
            guard let value = byte.first else { throw BackupError(.notABackup, "it ends inside its header") }
            if value == UInt8(ascii: "\n") { return String(decoding: bytes, as: UTF8.self) }
            bytes.append(value)
            guard bytes.count <= limit else { throw BackupError(.notABackup, "its header is not one Keyjar writes") }
        }
    }
}
