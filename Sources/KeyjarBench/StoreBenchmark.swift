import Foundation
import Glibc
import KeyjarCodec
import KeyjarCore
import KeyjarStore

/// The database alone: committing one cookie change (what every acknowledged write costs).
func runStoreBenchmark() throws {
    var template = Array("/tmp/kjstore-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw BenchmarkError("mkdtemp failed") }
    let directory = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let database = try StoreDatabase(path: directory + "/store.sqlite3")
    let now = Date()
    var samples: [UInt64] = []
    var previous: [Int: Cookie] = [:]
    for index in 0..<12_000 {
        let site = index % 2_000
        let cookie = Cookie(
            name: "c\(site)",
            value: "value\(index)",
            domain: "www.s\(site).test",
            hostOnly: true,
            expires: now.addingTimeInterval(86_400),
            secure: true,
            sameSite: .lax,
            creation: now
        )
        let change: CookieChange = previous[site].map { .replaced(old: $0, new: cookie) } ?? .added(cookie)
        previous[site] = cookie
        let start = nanoseconds()
        try database.commit([.cookies([change])], now: now)
        if index >= 2_000 { samples.append(nanoseconds() - start) }
        if index % 1_000 == 0 { try database.checkpoint() }
    }
    report("store_commit_one_cookie", samples: samples, p999: true)
}

/// Where a 100,000-cookie import spends its time inside keyjard (no socket, no JSON framing).
func runImportBreakdown() throws {
    var template = Array("/tmp/kjimport-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw BenchmarkError("mkdtemp failed") }
    let directory = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let database = try StoreDatabase(path: directory + "/store.sqlite3")
    let expiry = Int(Date().timeIntervalSince1970) + 86_400 * 30
    var text = ""
    for index in 0..<100_000 {
        text += ".site\(index % 5_000).example\tTRUE\t/\tFALSE\t\(expiry)\tk\(index / 5_000)\tv\(index)\n"
    }
    var start = nanoseconds()
    let parsed = NetscapeCookieFile.parse(text)
    print("import_parse_100k: \(String(format: "%.1f", Double(nanoseconds() - start) / 1e6)) ms")
    var jar = CookieJar(limits: CookieJar.Limits(perSite: 1000, perSitePurgedTo: 900, total: 200_000))
    start = nanoseconds()
    let report = jar.importCookies(parsed.cookies, problems: parsed.problems)
    print("import_jar_100k: \(String(format: "%.1f", Double(nanoseconds() - start) / 1e6)) ms")
    start = nanoseconds()
    let json = StoreEventJSON.encode(.cookies(changes: report.changes))
    print(
        "import_event_json_100k: \(String(format: "%.1f", Double(nanoseconds() - start) / 1e6)) ms (\(json.utf8.count / 1_048_576) MB)"
    )
    start = nanoseconds()
    try database.commit([.cookies(report.changes)])
    print("import_commit_100k: \(String(format: "%.1f", Double(nanoseconds() - start) / 1e6)) ms")
}
