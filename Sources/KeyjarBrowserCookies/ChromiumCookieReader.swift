public import Foundation
import KeyjarSQLite

/// Reads a Chromium-family profile's `Cookies` database through a private snapshot, decrypting
/// values with the browser's key.
public struct ChromiumCookieReader: Sendable {
    /// The `meta.version`s this reader knows: 24 added the host's hash to the plaintext; before
    /// 16 the columns (`samesite` as today, `top_frame_site_key`) were not yet there.
    public static let supportedVersions: ClosedRange<Int64> = 16...24
    static let requiredColumns: Set<String> = [
        "host_key", "name", "value", "encrypted_value", "path", "expires_utc", "creation_utc", "last_access_utc",
        "is_secure", "is_httponly", "samesite",
    ]

    public var profile: BrowserProfile
    /// Only the cookies of these domains and their subdomains (all when empty).
    public var domains: [String]

    public init(profile: BrowserProfile, domains: [String] = []) {
        self.profile = profile
        self.domains = domains
    }

    /// The cookies the browser would send.
    /// - Throws: `.secretServiceLocked` or `.noKeyVerifies` when v11 values exist and no key
    ///   opens any of them; `.unsupportedSchema` naming the version or the missing columns.
    public func read(now: Date = Date()) throws(BrowserCookieImportError) -> BrowserCookies {
        try read(now: now, passwords: nil)
    }

    /// `passwords`: the v11 candidates; nil asks the Secret Service (and adds the empty one).
    package func read(now: Date, passwords given: [String]?) throws(BrowserCookieImportError) -> BrowserCookies {
        let path = profile.cookieDatabase
        let snapshot = try BrowserDatabaseSnapshot(of: path)
        do {
            let database = snapshot.connection
            let versionStatement = try database.statement("SELECT value FROM meta WHERE key = 'version'")
            let version = try versionStatement.step() ? Int64(versionStatement.text(0)) ?? 0 : 0
            versionStatement.reset()
            guard Self.supportedVersions.contains(version) else {
                throw BrowserCookieImportError(
                    .unsupportedSchema,
                    "\(path) has Chromium cookie database version \(version); this keyjar reads versions "
                        + "\(Self.supportedVersions.lowerBound) to \(Self.supportedVersions.upperBound)."
                )
            }
            let columns = try database.columns(of: "cookies")
            // Either flag at 0 makes a session cookie; older databases have only one of them.
            let flags = ["has_expires", "is_persistent"].filter(columns.contains)
            let persistent = flags.isEmpty ? "has_expires" : flags.map { "\($0) != 0" }.joined(separator: " AND ")
            let missing = Self.requiredColumns.union(flags.isEmpty ? ["has_expires"] : [])
                .subtracting(columns).sorted()
            guard missing.isEmpty else {
                throw BrowserCookieImportError(
                    .unsupportedSchema,
                    "\(path) (Chromium cookie database version \(version)) lacks column\(missing.count == 1 ? "" : "s") "
                        + "\(missing.joined(separator: ", "))."
                )
            }
            let partition = columns.contains("top_frame_site_key") ? "top_frame_site_key" : "''"
            let statement = try database.statement(
                """
                SELECT host_key, name, value, encrypted_value, path, expires_utc, creation_utc, last_access_utc,
                       \(persistent), is_secure, is_httponly, samesite, \(partition) FROM cookies
                """
            )
            var lookup: ChromiumSafeStoragePassword.Lookup?
            var decryptor: ChromiumCookieDecryptor?
            var result = BrowserCookies()
            var v11Rows = 0
            while try statement.step() {
                let hostKey = statement.text(0)
                guard BrowserCookies.selects(host: hostKey, domains: domains) else { continue }
                let encrypted = statement.bytes(3)
                var value = statement.bytes(2)
                if !encrypted.isEmpty {
                    let isV11 = encrypted.starts(with: Array("v11".utf8))
                    // The Secret Service is asked only when a v11 value needs its password (v10's
                    // is built in): a database without one never touches the keyring.
                    if isV11, given == nil, lookup == nil {
                        let found = ChromiumSafeStoragePassword.lookup(
                            application: profile.browser.secretServiceApplication
                        )
                        lookup = found
                        decryptor = ChromiumCookieDecryptor(
                            passwords: found.passwords + [""],
                            hostHashed: version >= 24
                        )
                    }
                    if decryptor == nil {
                        decryptor = ChromiumCookieDecryptor(passwords: given ?? [], hostHashed: version >= 24)
                    }
                    if isV11 { v11Rows += 1 }
                    guard case .value(let plaintext) = decryptor?.decrypt(encrypted, hostKey: hostKey) else {
                        result.take(.failure(.undecryptable))
                        continue
                    }
                    value = plaintext
                }
                let row = ChromiumCookieRow(
                    hostKey: hostKey,
                    name: statement.text(1),
                    value: value,
                    path: statement.text(4),
                    expiresUTC: statement.int64(5),
                    creationUTC: statement.int64(6),
                    lastAccessUTC: statement.int64(7),
                    isPersistent: statement.bool(8),
                    isSecure: statement.bool(9),
                    isHttpOnly: statement.bool(10),
                    sameSite: statement.int64(11),
                    topFrameSiteKey: statement.text(12)
                )
                result.take(BrowserCookieRowDecoder.cookie(row, now: now))
            }
            if v11Rows > 0, decryptor?.hasVerifiedV11Key != true {
                throw keyError(lookup: lookup, rows: v11Rows)
            }
            if v11Rows > 0 { result.safeStoragePasswords = given ?? lookup.map { $0.passwords + [""] } }
            return result
        } catch let error as BrowserCookieImportError {
            throw error
        } catch {
            throw BrowserCookieImportError(.databaseCorrupt, "cannot read \(path): \(error).")
        }
    }

    /// None of the candidate keys opened any v11 value: say why, as far as it is known.
    private func keyError(lookup: ChromiumSafeStoragePassword.Lookup?, rows: Int) -> BrowserCookieImportError {
        let application = profile.browser.secretServiceApplication
        switch lookup?.problem {
        case .locked?:
            return BrowserCookieImportError(
                .secretServiceLocked,
                "the Secret Service's keyring is locked, so \(profile.browser.rawValue)'s Safe Storage password "
                    + "cannot be read: unlock it (log in to the desktop, or open Seahorse) and try again."
            )
        case .unavailable(let reason)? where lookup?.passwords.isEmpty == true:
            return BrowserCookieImportError(
                .secretServiceUnavailable,
                "\(rows) cookie value\(rows == 1 ? " is" : "s are") encrypted with \(profile.browser.rawValue)'s "
                    + "Safe Storage password, and the Secret Service cannot be asked for it: \(reason)."
            )
        default:
            let found = lookup.map { $0.passwords.count } ?? 0
            return BrowserCookieImportError(
                .noKeyVerifies,
                "no key opens \(profile.browser.rawValue)'s \(rows) encrypted cookie value\(rows == 1 ? "" : "s"): "
                    + "tried \(found) Safe Storage password\(found == 1 ? "" : "s") from the Secret Service "
                    + "(application '\(application)') and the empty one."
            )
        }
    }
}
