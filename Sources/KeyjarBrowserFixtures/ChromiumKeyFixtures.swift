import Crypto
import CryptoExtras
import Foundation
package import KeyjarBrowserCookies
import KeyjarLibSecret

// What a Chromium-family browser does to its cookies that Keyjar itself never does: encrypt a
// value, and keep the Safe Storage key in the Secret Service. For the tests and the benchmark,
// which build browsers' databases; kept out of KeyjarBrowserCookies, so that the `keyjar`
// command carries no code that writes a browser's key.

extension ChromiumCookieDecryptor {
    /// Encrypts as the browser does: for tests and the benchmark, which build browsers' databases.
    package static func encrypt(
        _ value: [UInt8],
        password: String,
        version: String,
        hostKey: String?
    ) throws -> [UInt8] {
        let plaintext = (hostKey.map { Array(SHA256.hash(data: Array($0.utf8))) } ?? []) + value
        let sealed = try AES._CBC.encrypt(
            plaintext,
            using: key(password: password),
            iv: AES._CBC.IV(ivBytes: [UInt8](repeating: 0x20, count: 16))
        )
        return Array(version.utf8) + Array(sealed)
    }
}

extension ChromiumSafeStoragePassword {
    /// Stores `password` as `application`'s Safe Storage password in the default collection,
    /// as the browser does on its first start: for tests and the benchmark, which build a
    /// browser's database and need its key where the browser keeps it.
    package static func store(_ password: String, application: String) throws(BrowserCookieImportError) {
        let attributes: LibSecretAttributes
        do {
            attributes = try LibSecretAttributes()
            try attributes.set("application", application)
        } catch {
            throw BrowserCookieImportError(.secretServiceUnavailable, "\(error.message ?? "no message").")
        }
        do {
            try LibSecret.store(password, .chromiumV2, attributes, label: "\(application) Safe Storage")
        } catch {
            guard let message = error.message else {
                throw BrowserCookieImportError(.secretServiceUnavailable, "libsecret did not store the password.")
            }
            throw BrowserCookieImportError(.secretServiceUnavailable, "cannot store the password: \(message).")
        }
    }
}
