package import Crypto
import FoundationEssentials
import KeyjarCodec
package import KeyjarSealing

/// The encrypted secrets file (``EncryptedSecretStore``), read and written here alone
/// (`Schemas/secret-schema.md`, "The encrypted secrets file"):
///
/// ```json
/// {
///   "format" : "org.keyjar.sealed-secrets",
///   "items" : [ { "authtype" : "httpBasic", …, "user" : "alice", "sealed" : "…" } ],
///   "kdf" : { "n" : 131072, "name" : "scrypt", "p" : 1, "r" : 8, "salt" : "…" },
///   "key" : "…",
///   "version" : 1
/// }
/// ```
///
/// Every secret is sealed with ChaCha20-Poly1305 under the file's data key (256 random bits),
/// each under a random nonce of its own, its item's key as authenticated data: a sealed value
/// moved to another item, or changed, does not open. The data key itself is sealed (`key`)
/// under a key derived from the passphrase (`kdf`, ``PassphraseKey``): changing the passphrase
/// seals the data key again and leaves every item as it was. Which credentials have secrets
/// (hosts and users, as the database also holds them) is readable without the passphrase, so
/// that keyjard can list and remove them while the file is locked; no secret and no key is
/// ever in the file in clear. Sealed values are base64 (`nonce ‖ ciphertext ‖ tag`).
package struct SealedSecretsFile: Sendable, Equatable {
    static let format = "org.keyjar.sealed-secrets"
    static let version = 1
    /// The sealed data key's authenticated data: the data key of a file of another format or
    /// version does not open as this one's.
    private static let keyBinding = Array("\(format) \(version) data key".utf8)

    package struct Item: Sendable, Equatable {
        package var key: SecretFileKey
        package var sealed: [UInt8]
    }

    package var kdf: PassphraseKey
    /// The data key, sealed under the passphrase's key.
    package var sealedKey: [UInt8]
    package var items: [Item]

    init(kdf: PassphraseKey, sealedKey: [UInt8], items: [Item]) {
        self.kdf = kdf
        self.sealedKey = sealedKey
        self.items = items
    }

    /// A new, empty file whose data key (returned, with the file) opens under `passphrase`.
    static func create(passphrase: String, cost: PassphraseKey.Cost) throws -> (SealedSecretsFile, SymmetricKey) {
        let dataKey = SymmetricKey(size: .bits256)
        var file = SealedSecretsFile(kdf: PassphraseKey(cost: cost), sealedKey: [], items: [])
        try file.sealKey(dataKey, passphrase: passphrase, cost: cost)
        return (file, dataKey)
    }

    /// Seals `dataKey` under `passphrase` with a fresh salt at `cost`.
    mutating func sealKey(_ dataKey: SymmetricKey, passphrase: String, cost: PassphraseKey.Cost) throws {
        kdf = PassphraseKey(cost: cost)
        let wrapping = try kdf.key(passphrase: passphrase)
        sealedKey = Array(
            try ChaChaPoly.seal(
                dataKey.withUnsafeBytes { Array($0) },
                using: wrapping,
                authenticating: Self.keyBinding
            ).combined
        )
    }

    /// The data key, opened with `passphrase`.
    /// - Throws: ``SecretStoreError`` `.wrongPassphrase`, or `.unreadableFile` when the file's
    ///   parameters are not ones Keyjar derives with.
    func dataKey(passphrase: String, path: String) throws -> SymmetricKey {
        let wrapping: SymmetricKey
        do {
            wrapping = try kdf.key(passphrase: passphrase)
        } catch {
            throw SecretStoreError(.unreadableFile, "\(path): its key derivation: \(error)")
        }
        // A wrong passphrase and a changed `key` look alike: neither opens.
        guard let box = try? ChaChaPoly.SealedBox(combined: sealedKey),
            let opened = try? ChaChaPoly.open(box, using: wrapping, authenticating: Self.keyBinding),
            opened.count == ProtectedKey.byteCount
        else { throw SecretStoreError(.wrongPassphrase, path) }
        return SymmetricKey(data: opened)
    }

    /// `secret` sealed for the item `key`.
    static func seal(_ secret: String, for key: SecretFileKey, with dataKey: SymmetricKey) throws -> [UInt8] {
        Array(try ChaChaPoly.seal(Array(secret.utf8), using: dataKey, authenticating: key.boundBytes).combined)
    }

    /// The secret sealed for the item `key`.
    /// - Throws: ``SecretStoreError`` `.unreadableFile` when it does not open (changed, moved
    ///   from another item, or sealed under another data key): the message names the item's
    ///   host and user, never a secret.
    package static func open(
        _ sealed: [UInt8],
        for key: SecretFileKey,
        with dataKey: SymmetricKey,
        path: String
    ) throws
        -> String
    {
        guard let box = try? ChaChaPoly.SealedBox(combined: sealed),
            let opened = try? ChaChaPoly.open(box, using: dataKey, authenticating: key.boundBytes)
        else {
            throw SecretStoreError(
                .unreadableFile,
                "\(path): the secret of \(key.user) at \(key.server) does not open (the file was changed)"
            )
        }
        return String(decoding: opened, as: UTF8.self)
    }

    // MARK: - Bytes

    /// Reads a file's bytes.
    /// - Throws: ``SecretStoreError`` `.unreadableFile`, naming the place, never a value.
    package init(bytes: [UInt8], path: String) throws {
        guard let json = JSONReader.parse(bytes) else {
            throw SecretStoreError(.unreadableFile, "\(path) is not an encrypted Keyjar secrets file (invalid JSON)")
        }
        try SecretsFileFormat.check(
            json,
            format: Self.format,
            version: Self.version,
            kind: "an encrypted Keyjar secrets file",
            path: path
        )
        do throws(JSONShapeError) {
            kdf = try json.required("kdf") { kdf throws(JSONShapeError) in
                guard try kdf.string("name") == "scrypt" else { throw JSONShapeError.invalidValue.under("name") }
                return PassphraseKey(
                    rounds: try kdf.int("n"),
                    blockSize: try kdf.int("r"),
                    parallelism: try kdf.int("p"),
                    salt: try Self.base64(kdf, "salt")
                )
            }
            sealedKey = try Self.base64(json, "key")
            items = try json.required("items") { items throws(JSONShapeError) in
                try items.elements { item throws(JSONShapeError) in
                    Item(key: try SecretFileKey(json: item), sealed: try Self.base64(item, "sealed"))
                }
            }
        } catch {
            throw SecretStoreError(.unreadableFile, "\(path) is not an encrypted Keyjar secrets file (\(error))")
        }
        if let problem = kdf.problem {
            throw SecretStoreError(.unreadableFile, "\(path): its key derivation: \(problem)")
        }
    }

    private static func base64(_ json: JSONValue, _ member: String) throws(JSONShapeError) -> [UInt8] {
        guard let bytes = Data(base64Encoded: try json.string(member)) else {
            throw JSONShapeError.invalidValue.under(member)
        }
        return Array(bytes)
    }

    /// The file's bytes, laid out for reading (members sorted, indented).
    package var bytes: [UInt8] {
        func base64(_ bytes: [UInt8]) -> JSONValue { .string(Data(bytes).base64EncodedString()) }
        return JSONValue.object([
            ("format", .string(Self.format)),
            ("items", .array(items.map { $0.key.json(with: "sealed", base64($0.sealed)) })),
            (
                "kdf",
                .object([
                    ("n", .integer(kdf.rounds)), ("name", .string("scrypt")), ("p", .integer(kdf.parallelism)),
                    ("r", .integer(kdf.blockSize)), ("salt", base64(kdf.salt)),
                ])
            ),
            ("key", base64(sealedKey)),
            ("version", .integer(Self.version)),
        ]).encoded(.readable)
    }
}
