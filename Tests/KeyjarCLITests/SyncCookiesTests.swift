import Foundation
import KeyjarTestSupport
import Testing

/// `keyjar sync --cookies`: the named sites' cookies on every machine, every other cookie on
/// its own.
extension SyncCommandTests {
    /// A machine's cookies of `domain` by identity, each with the fields a sync carries (its
    /// times of creation and use are each machine's own; the expiry to the millisecond).
    private func cookies(of machine: Machine, domain: String) async throws -> [String: [String: String]] {
        let listed = try await machine.keyjar("cookie", "list", "--domain", domain, "--json")
        let array = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]])
        var found: [String: [String: String]] = [:]
        for cookie in array {
            var fields: [String: String] = [:]
            for (key, value) in cookie where key != "creation" && key != "lastAccess" {
                if key == "expires", let seconds = value as? Double {
                    fields[key] = String(Int64((seconds * 1000).rounded()))
                } else {
                    fields[key] = "\(value)"
                }
            }
            let identity = ["name", "domain", "hostOnly", "path", "partitionKey"].map { fields[$0] ?? "" }
            found[identity.joined(separator: " ")] = fields
        }
        return found
    }

    @Test func cookiesOfANamedSiteReachTheOtherMachineAndNoOthers() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        let site = uniqueHost("sync-cookies")
        let other = uniqueHost("sync-other")
        try await a.keyjar(
            "cookie",
            "set",
            "--url",
            "https://\(site)/",
            "sid=s1; Secure; HttpOnly; SameSite=Strict; Max-Age=3600",
            "pref=dark-theme-7f3a"
        )
        // A partitioned cookie of a name under the site, set under another top-level site.
        try await a.keyjar(
            "cookie",
            "set",
            "--url",
            "https://chat.\(site)/",
            "--main-document",
            "https://news.example/",
            "__Host-chat=c1; Secure; Path=/; Partitioned; Max-Age=3600"
        )
        try await a.keyjar("cookie", "set", "--url", "https://\(other)/", "track=1; Max-Age=3600")

        // A public suffix is refused: it would name every site under it.
        let suffix = try await a.run([KeyjarCLI.binary, "sync", "--cookies", "co.uk"])
        #expect(suffix.status == 2 && suffix.error.contains("public suffix"), "\(suffix.status) \(suffix.error)")

        let synced = try await a.keyjar("sync", "--cookies", site)
        #expect(synced.contains("cookies of \(site)") && synced.contains("3 exported"), "\(synced)")
        let pulled = try await b.keyjar("sync")
        #expect(pulled.contains("3 imported"), "\(pulled)")
        let onA = try await cookies(of: a, domain: site)
        #expect(onA.count == 3)
        #expect(try await cookies(of: b, domain: site) == onA)
        #expect(try await cookies(of: b, domain: other).isEmpty)
        let partitioned = try #require(onA.values.first { $0["name"] == "__Host-chat" })
        #expect(partitioned["partitionKey"] == "https://news.example")

        // pass reads the entries: the value first; the site's name is in the store, the value
        // in no file in clear.
        let shown = try await b.run(["pass", "show", "keyjar-cookies/\(site)/sid (host only)"])
        #expect(shown.status == 0, "\(shown.error)")
        #expect(
            shown.output.hasPrefix("s1\ncookie: sid\ndomain: \(site)\nhost-only: yes\npath: /\n"),
            "\(shown.output)"
        )
        let files = try await b.run(["git", "-C", b.store, "ls-files"])
        #expect(!files.output.contains(other), "\(files.output)")
        for directory in [a.store, b.store, machines.remote.path, a.home.path("state"), b.home.path("state")] {
            let found = try await runCommand("/usr/bin/grep", ["-rlaF", "dark", directory])
            #expect(found.status == 1, "\(directory): \(found.output)")
        }

        // An entry written with pass reaches Keyjar; an expired one leaves the store.
        let inserted = try await b.run(
            ["pass", "insert", "-m", "keyjar-cookies/\(site)/typed"],
            input: "t1\ncookie: typed\ndomain: \(site)\npath: /\nexpires: 2099-01-01T00:00:00Z\n"
        )
        #expect(inserted.status == 0, "\(inserted.error)")
        let expired = try await b.run(
            ["pass", "insert", "-m", "keyjar-cookies/\(site)/old"],
            input: "o1\ncookie: old\ndomain: \(site)\npath: /\nexpires: 2001-01-01T00:00:00Z\n"
        )
        #expect(expired.status == 0, "\(expired.error)")
        let fromPass = try await b.keyjar("sync")
        #expect(fromPass.contains("1 imported") && fromPass.contains("1 removed from the store"), "\(fromPass)")
        try await a.keyjar("sync")
        #expect(try await a.keyjar("cookie", "get", "https://\(site)/").contains("typed=t1"))
    }

    /// A persistent cookie removed on one machine (a logout) goes on the other; a session
    /// cookie that went with the end of a login session comes back from the store.
    @Test func aRemovedCookieGoesAndASessionCookieComesBack() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        let site = uniqueHost("sync-cookie-gone")
        try await a.keyjar("cookie", "set", "--url", "https://\(site)/", "sid=s1; Max-Age=3600", "pref=dark-theme-7f3a")
        try await a.keyjar("sync", "--cookies", site)
        try await b.keyjar("sync")
        try await b.keyjar("cookie", "delete", "--domain", site, "--name", "sid")
        try await b.keyjar("cookie", "delete", "--domain", site, "--name", "pref")
        let removed = try await b.keyjar("sync")
        #expect(removed.contains("1 imported") && removed.contains("1 removed from the store"), "\(removed)")
        try await a.keyjar("sync")
        for machine in [a, b] {
            #expect(try await machine.keyjar("cookie", "get", "https://\(site)/") == "pref=dark-theme-7f3a\n")
        }
    }

    /// Both machines changed one cookie before either synced: the later change wins on both.
    @Test func oneCookieChangedOnBothMachinesKeepsTheLater() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        let site = uniqueHost("sync-cookie-both")
        try await a.keyjar("cookie", "set", "--url", "https://\(site)/", "sid=first; Max-Age=3600")
        try await a.keyjar("sync", "--cookies", site)
        try await b.keyjar("sync")
        try await a.keyjar("cookie", "set", "--url", "https://\(site)/", "sid=changed-on-a; Max-Age=3600")
        try await b.keyjar("cookie", "set", "--url", "https://\(site)/", "sid=changed-on-b; Max-Age=3600")
        try await a.keyjar("sync")
        let second = try await b.keyjar("sync")
        #expect(second.contains("conflict: "), "\(second)")
        try await a.keyjar("sync")
        for machine in [a, b] {
            #expect(try await machine.keyjar("cookie", "get", "https://\(site)/") == "sid=changed-on-b\n")
        }
    }

    /// `--no-cookies`: the site's entries leave the store, each machine keeps its cookies, and
    /// its later cookies stay on it.
    @Test func stoppingASiteEmptiesTheStoreAndKeepsEachMachinesCookies() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        let site = uniqueHost("sync-cookie-stop")
        try await a.keyjar("cookie", "set", "--url", "https://\(site)/", "sid=s1; Max-Age=3600")
        try await a.keyjar("sync", "--cookies", site)
        try await b.keyjar("sync")
        let stopped = try await b.keyjar("sync", "--no-cookies", site)
        #expect(!stopped.contains("cookies of"), "\(stopped)")
        try await a.keyjar("sync")
        try await a.keyjar("cookie", "set", "--url", "https://\(site)/", "later=1; Max-Age=3600")
        let after = try await a.keyjar("sync")
        #expect(after.contains("0 exported"), "\(after)")
        let files = try await a.run(["git", "-C", a.store, "ls-files"])
        #expect(!files.output.contains("keyjar-cookies/"), "\(files.output)")
        for machine in [a, b] {
            #expect(try await machine.keyjar("cookie", "get", "https://\(site)/").contains("sid=s1"))
        }
    }

    /// Two machines naming a site each before either synced: both sites are synced after.
    @Test func sitesNamedOnTwoMachinesAtOnceAreBothKept() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        let first = uniqueHost("sync-site-a")
        let second = uniqueHost("sync-site-b")
        try await a.keyjar("cookie", "set", "--url", "https://\(first)/", "a=1; Max-Age=3600")
        try await b.keyjar("cookie", "set", "--url", "https://\(second)/", "b=2; Max-Age=3600")
        try await a.keyjar("sync", "--cookies", first)
        let merged = try await b.keyjar("sync", "--cookies", second)
        #expect(
            merged.contains("cookies of \(first), \(second)") || merged.contains("cookies of \(second), \(first)"),
            "\(merged)"
        )
        try await a.keyjar("sync")
        for machine in [a, b] {
            #expect(try await machine.keyjar("cookie", "get", "https://\(first)/") == "a=1\n")
            #expect(try await machine.keyjar("cookie", "get", "https://\(second)/") == "b=2\n")
        }
    }
}
