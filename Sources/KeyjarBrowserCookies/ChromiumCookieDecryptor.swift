package import Crypto
import CryptoExtras
import Foundation

/// Chromium's cookie encryption on Linux (OSCrypt): AES-128-CBC with an IV of 16 spaces, the
/// key PBKDF2-HMAC-SHA1 of a password, salt `saltysalt`, one iteration. `v10` values use the
/// password `peanuts`; `v11` values the browser's Safe Storage password from the Secret
/// Service (or the empty password, when the browser found no keyring).
///
/// Which v11 key is right is not guessed from the desktop: each candidate is tried, and the one
/// that verifies is kept. From database version 24 the plaintext starts with SHA-256 of the
/// cookie's host, which proves the key; before, a key is taken when the padding is valid and
/// the value is UTF-8 without controls.
package struct ChromiumCookieDecryptor {
    package enum Outcome: Equatable {
        case value([UInt8])
        /// No key opens it (a v11 value when no candidate verifies, an unknown prefix).
        case undecryptable
    }

    private let v10Key: SymmetricKey?
    private var v11Keys: [SymmetricKey]
    /// The v11 key that verified last: tried first for the next value.
    private var verified: Int?
    private let hostHashed: Bool
    private static let iv = try? AES._CBC.IV(ivBytes: [UInt8](repeating: 0x20, count: 16))

    /// - Parameters:
    ///   - passwords: the v11 candidates, in the order to try them.
    ///   - hostHashed: the database's `meta.version` is 24 or later.
    package init(passwords: [String], hostHashed: Bool) {
        v10Key = try? Self.key(password: "peanuts")
        v11Keys = passwords.compactMap { try? Self.key(password: $0) }
        self.hostHashed = hostHashed
    }

    /// Whether any v11 value has been opened: when none could be, the password is wrong.
    package var hasVerifiedV11Key: Bool { verified != nil }

    package static func key(password: String) throws -> SymmetricKey {
        // One iteration is Chromium's choice, not ours; the checked API refuses fewer than 210,000.
        try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8),
            salt: Array("saltysalt".utf8),
            using: .insecureSHA1,
            outputByteCount: 16,
            unsafeUncheckedRounds: 1
        )
    }

    /// The plaintext of an `encrypted_value`, checked against `hostKey` when the version hashes it.
    package mutating func decrypt(_ encrypted: [UInt8], hostKey: String) -> Outcome {
        let prefix = encrypted.prefix(3)
        let ciphertext = encrypted.dropFirst(3)
        if prefix.elementsEqual("v10".utf8) {
            guard let v10Key else { return .undecryptable }
            return open(ciphertext, with: v10Key, hostKey: hostKey).map(Outcome.value) ?? .undecryptable
        }
        guard prefix.elementsEqual("v11".utf8) else { return .undecryptable }
        let order = verified.map { first in [first] + v11Keys.indices.filter { $0 != first } } ?? Array(v11Keys.indices)
        for index in order {
            if let plaintext = open(ciphertext, with: v11Keys[index], hostKey: hostKey) {
                verified = index
                return .value(plaintext)
            }
        }
        return .undecryptable
    }

    private func open(_ ciphertext: ArraySlice<UInt8>, with key: SymmetricKey, hostKey: String) -> [UInt8]? {
        guard !ciphertext.isEmpty, ciphertext.count % 16 == 0, let iv = Self.iv,
            let plaintext = try? AES._CBC.decrypt(ciphertext, using: key, iv: iv)
        else { return nil }
        if hostHashed {
            guard plaintext.count >= 32,
                plaintext.prefix(32).elementsEqual(SHA256.hash(data: Array(hostKey.utf8)))
            else { return nil }
            return Array(plaintext.dropFirst(32))
        }
        let bytes = Array(plaintext)
        guard String(validating: bytes, as: UTF8.self) != nil, !bytes.contains(where: { $0 < 0x20 || $0 == 0x7F })
        else { return nil }
        return bytes
    }
}
