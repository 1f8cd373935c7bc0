import Foundation
import KeyjarCodec
import KeyjarCore

private let now = Date(timeIntervalSince1970: 1_767_225_600)
private let origins = [
    "https://www.example.com/a/b", "http://127.0.0.1/", "http://co.uk/", "https://x.github.io/p", "http://[::1]:8080/",
]

/// A Set-Cookie header with a context: the first byte picks the origin and request kind, the
/// rest is the header. What is stored must obey the jar's invariants.
func fuzzSetCookie(_ bytes: [UInt8]) {
    guard let first = bytes.first else { return }
    let header = String(decoding: bytes.dropFirst(), as: UTF8.self)
    guard let url = URL(string: origins[Int(first) % origins.count]),
        let context = CookieContext(
            url: url,
            mainDocumentURL: first & 0x10 == 0 ? nil : URL(string: "https://other.example/"),
            isTopLevelNavigation: first & 0x20 == 0,
            httpMethod: first & 0x40 == 0 ? "GET" : "POST",
            api: first & 0x80 == 0 ? .http : .nonHTTP
        )
    else { return }
    _ = try? SetCookieParser.parse(header)
    var jar = CookieJar()
    if case .success = jar.setCookie(header, context: context, now: now) {
        for cookie in jar.allCookies {
            let text = Array(cookie.name.utf8) + Array(cookie.value.utf8) + Array(cookie.path.utf8)
            fuzzCheck(!text.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }, "a control character was stored")
            fuzzCheck(cookie.name.utf8.count + cookie.value.utf8.count <= 4096, "an oversized cookie was stored")
            fuzzCheck(cookie.path.hasPrefix("/"), "a path without /: \(cookie.path)")
            fuzzCheck(cookie.sameSite != .none || cookie.secure, "SameSite=None without Secure")
        }
        _ = jar.cookieHeader(for: context, now: now)
    }
}

/// RFC 6265bis's cookie-date algorithm on any text: a date it returns is a real one.
func fuzzCookieDate(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    if let date = CookieDate.parse(text) {
        fuzzCheck(date.timeIntervalSince1970.isFinite, "a non-finite date from \(text.debugDescription)")
    }
}

/// A cookies.txt (curl, wget): every content line is imported or reported, never both.
func fuzzNetscapeFile(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let parsed = NetscapeCookieFile.parse(text)
    var jar = CookieJar()
    let report = jar.importCookies(parsed.cookies, problems: parsed.problems, now: now)
    fuzzCheck(report.imported + report.expired + report.problems.count >= parsed.cookies.count, "a cookie went missing")
    _ = NetscapeCookieFile.serialize(jar.allCookies, includeSameSite: true)
}

/// A JSON cookie file: whatever parses survives a serialize/parse round trip.
func fuzzJSONFile(_ bytes: [UInt8]) {
    let parsed = CookieJSONFile.parse(Data(bytes))
    let cookies = parsed.cookies.map(\.cookie)
    let again = CookieJSONFile.parse(CookieJSONFile.serialize(cookies))
    fuzzCheck(again.problems.isEmpty, "a serialized file does not parse back: \(again.problems)")
    fuzzCheck(again.cookies.map(\.cookie) == cookies, "the JSON round trip changed a cookie")
}
