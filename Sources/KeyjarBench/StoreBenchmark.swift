import Foundation
import Glibc
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
            name: "c\(site)", value: "value\(index)", domain: "www.s\(site).test", hostOnly: true,
            expires: now.addingTimeInterval(86_400), secure: true, sameSite: .lax, creation: now)
        let change: CookieChange = previous[site].map { .replaced(old: $0, new: cookie) } ?? .added(cookie)
        previous[site] = cookie
        let start = nanoseconds()
        try database.commit([.cookies([change])], now: now)
        if index >= 2_000 { samples.append(nanoseconds() - start) }
        if index % 1_000 == 0 { try database.checkpoint() }
    }
    report("store_commit_one_cookie", samples: samples, p999: true)
}
