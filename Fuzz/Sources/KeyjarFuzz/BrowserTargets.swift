import Foundation
import KeyjarBrowserCookies
import KeyjarCore

private let now = Date(timeIntervalSince1970: 1_767_225_600)

/// One browser row from any bytes: the first byte picks Firefox or Chromium and the flags, the
/// next eight the times, the rest are the text fields split at NUL (name, value, host, path,
/// origin attributes or top-frame site). What decodes must be a cookie a header can carry, not
/// yet expired, its domain canonical and its partition key one that reads back; the Chromium
/// decryptor takes the value bytes as ciphertext and must never crash on them.
func fuzzBrowserRow(_ bytes: [UInt8]) {
    guard bytes.count > 9 else { return }
    let flags = bytes[0]
    let number = bytes[1..<9].reduce(Int64(0)) { $0 << 8 | Int64($1) }
    let fields = bytes.dropFirst(9).split(separator: 0, omittingEmptySubsequences: false).map {
        String(decoding: $0, as: UTF8.self)
    }
    func field(_ index: Int) -> String { index < fields.count ? fields[index] : "" }
    let result: Result<Cookie, BrowserCookieSkip>
    if flags & 1 == 0 {
        let row = FirefoxCookieRow(
            name: field(0),
            value: field(1),
            host: field(2),
            path: field(3),
            expiry: number,
            expiryInMilliseconds: flags & 2 != 0,
            creationTime: number / 3,
            lastAccessed: number / 2,
            isSecure: flags & 4 != 0,
            isHttpOnly: flags & 8 != 0,
            sameSite: Int64(flags >> 4 & 3),
            rawSameSite: flags & 0x40 == 0 ? nil : Int64(flags >> 6 & 1),
            originAttributes: field(4)
        )
        result = BrowserCookieRowDecoder.cookie(row, container: Int(flags >> 7), now: now)
    } else {
        let value = Array(field(1).utf8)
        var decryptor = ChromiumCookieDecryptor(passwords: ["", "fuzz"], hostHashed: flags & 2 != 0)
        _ = decryptor.decrypt(value, hostKey: field(2))
        let row = ChromiumCookieRow(
            hostKey: field(2),
            name: field(0),
            value: value,
            path: field(3),
            expiresUTC: number,
            creationUTC: number / 3,
            lastAccessUTC: number / 2,
            isPersistent: flags & 4 != 0,
            isSecure: flags & 8 != 0,
            isHttpOnly: flags & 0x10 != 0,
            sameSite: Int64(flags >> 5 & 3) - 1,
            topFrameSiteKey: field(4)
        )
        result = BrowserCookieRowDecoder.cookie(row, now: now)
    }
    guard case .success(let cookie) = result else { return }
    let text = Array(cookie.name.utf8) + Array(cookie.value.utf8) + Array(cookie.path.utf8)
    fuzzCheck(!text.contains { $0 < 0x20 || $0 == 0x7F }, "a control character was imported")
    fuzzCheck(!cookie.domain.isEmpty && !cookie.domain.hasPrefix("."), "a domain that is not canonical")
    fuzzCheck(cookie.domain == cookie.domain.lowercased(), "an upper-case domain")
    fuzzCheck(cookie.path.hasPrefix("/"), "a path without /: \(cookie.path)")
    fuzzCheck(!cookie.isExpired(at: now), "an expired cookie was imported")
    if let key = cookie.partitionKey {
        fuzzCheck(CookiePartitionKey(serialized: key.serialized) == key, "a partition key that does not read back")
    }
}
