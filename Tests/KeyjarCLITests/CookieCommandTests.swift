import Foundation
import Glibc
import Keyjar
import KeyjarCore
import KeyjarLocks
import KeyjarTestSupport
import Testing

@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct CookieCommandTests {
    @Test func setGetListDeleteAndClearGoThroughKeyjard() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)

        // Given cookies set as a response from www.example.com would set them
        try await keyjar.ok(
            "cookie",
            "set",
            "--url",
            "https://www.example.com/",
            "sid=42; Secure; Max-Age=3600",
            "theme=dark"
        )
        try await keyjar.ok("cookie", "set", "--url", "https://shop.example.com/", "cart=7; Domain=example.com")
        try await keyjar.ok("cookie", "set", "--url", "https://other.test/", "o=1")

        // Then get prints exactly the Cookie header for a URL
        #expect(try await keyjar.ok("cookie", "get", "https://www.example.com/") == "sid=42; theme=dark; cart=7\n")
        #expect(try await keyjar.ok("cookie", "get", "http://www.example.com/") == "theme=dark; cart=7\n")
        #expect(try await keyjar.ok("cookie", "get", "https://nothing.test/").isEmpty)

        // And list filters by domain, name, session or persistent
        #expect(try await keyjar("cookie", "list").lines.count == 4)
        let exampleLines = try await keyjar("cookie", "list", "--domain", "example.com").lines
        #expect(exampleLines.count == 3 && exampleLines.allSatisfy { $0.contains("example.com") })
        #expect(try await keyjar("cookie", "list", "--persistent").lines.map { $0.prefix(7) } == ["sid=42;"])
        #expect(try await keyjar("cookie", "list", "--session", "--domain", "example.com").lines.count == 2)
        let cookies = try #require(
            try await keyjar.json("cookie", "list", "--json", "--name", "cart") as? [[String: Any]]
        )
        #expect(cookies.count == 1)
        #expect(cookies.first?["domain"] as? String == "example.com" && cookies.first?["hostOnly"] as? Bool == false)

        // When one is deleted and a domain cleared
        try await keyjar.ok("cookie", "delete", "--domain", "www.example.com", "--name", "theme")
        #expect(try await keyjar.ok("cookie", "get", "https://www.example.com/") == "sid=42; cart=7\n")
        let missing = try await keyjar("cookie", "delete", "--domain", "www.example.com", "--name", "theme")
        #expect(missing.status == 1 && missing.error.contains("no cookie named 'theme'"))
        try await keyjar.ok("cookie", "clear", "--domain", "example.com")

        // Then only the other site's cookie is left
        #expect(try await keyjar("cookie", "list").lines.map { $0.prefix(4) } == ["o=1;"])
        try await keyjar.ok("cookie", "clear", "--all")
        #expect(try await keyjar.ok("cookie", "list").isEmpty)
    }

    @Test func aRejectedCookieSaysWhyAndFails() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)

        let publicSuffix = try await keyjar(
            "cookie",
            "set",
            "--url",
            "https://www.example.com/",
            "a=1; Domain=com",
            "b=2"
        )
        #expect(publicSuffix.status == 1)
        #expect(publicSuffix.error.contains("cookie 'a=1' was not stored: Domain=com is a public suffix"))
        #expect(publicSuffix.output.isEmpty)
        // The good one of the two is stored all the same.
        #expect(try await keyjar.ok("cookie", "get", "https://www.example.com/") == "b=2\n")

        let insecure = try await keyjar("cookie", "set", "--url", "http://www.example.com/", "s=1; Secure")
        #expect(insecure.status == 1 && insecure.error.lowercased().contains("secure"))
    }

    @Test func badInputIsAUsageError() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)

        for arguments in [
            ["cookie", "get", "not a url"], ["cookie", "get", "ftp://example.com/"], ["cookie", "get", "example.com"],
            ["cookie", "set", "--url", "nope", "a=1"], ["cookie", "set", "--url", "https://example.com/"],
            ["cookie", "list", "--session", "--persistent"], ["cookie", "clear"],
            ["cookie", "export", "--format", "xml"],
            ["cookie", "frobnicate"],
        ] {
            let result = try await keyjar.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.error)")
            #expect(result.output.isEmpty && !result.error.isEmpty, "\(arguments)")
        }
        let malformed = try await keyjar.run(["cookie", "get", "example.com"])
        #expect(malformed.error.contains("'example.com' is not a URL"), "\(malformed.error)")
    }

    @Test func importReportsMalformedLinesWithTheirNumbers() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let file = daemon.directory.path("cookies.txt")
        let expiry = Int(Date().timeIntervalSince1970) + 3600
        try """
        # Netscape HTTP Cookie File
        .example.com\tTRUE\t/\tFALSE\t\(expiry)\tgood\t1
        this line is not a cookie
        #HttpOnly_www.example.com\tFALSE\t/\tTRUE\t0\thidden\t2
        .example.com\tTRUE\t/\tFALSE\tsoon\tbaddate\t3
        .example.com\tTRUE\t/\tFALSE\t1000\told\t4

        """.write(toFile: file, atomically: true, encoding: .utf8)

        let result = try await keyjar("cookie", "import", file)
        #expect(result.status == 1)
        #expect(
            result.output == "read 5 cookies: 2 kept (2 new, 0 replacing stored ones), 1 already expired, 2 rejected\n"
        )
        let problems = result.error.split(separator: "\n").filter { $0.contains("cookies.txt:") }
        #expect(problems.count == 2, "\(result.error)")
        #expect(problems.first?.contains("\(file):3: ") == true)
        #expect(problems.last?.contains("\(file):5: ") == true)
        #expect(try await keyjar.ok("cookie", "get", "https://www.example.com/") == "good=1; hidden=2\n")

        let unreadable = try await keyjar("cookie", "import", daemon.directory.path("no-such-file.txt"))
        #expect(unreadable.status == 1 && unreadable.error.contains("cannot read"))
    }

    /// 120,000 lines over 3,000 sites, the default limits: imported in batches (a problem keeps
    /// its number in the whole file), committed by keyjard in chunks, and a subscriber ends
    /// with exactly keyjard's jar.
    @Test func aLargeFileImportsInBatchesAndEverySubscriberCatchesUp() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let subscriber = try SharedCookieStorage(configuration: .init(socketPath: daemon.socketPath, autoStart: false))
        let file = daemon.directory.path("big.txt")
        let expiry = Int(Date().timeIntervalSince1970) + 86_400
        var text = ""
        for index in 0..<120_000 {
            text +=
                index == 104_321
                ? "not a cookie line\n" : ".site\(index / 40).example\tTRUE\t/\tFALSE\t\(expiry)\tn\(index % 40)\tv\n"
        }
        try text.write(toFile: file, atomically: true, encoding: .utf8)

        let result = try await keyjar("cookie", "import", file)
        #expect(result.status == 1, "\(result.error)")
        // 40 cookies a site fit the per-site limit; 3,000 sites do not fit the total of 3,300.
        #expect(result.output.hasPrefix("read 120000 cookies: "), "\(result.output)")
        #expect(result.output.hasSuffix(" 1 rejected\n"), "\(result.output)")
        #expect(result.error.hasPrefix("keyjar: \(file):104322: "), "\(result.error)")

        let listed = try await keyjar.ok("cookie", "list", "--json")
        let stored = try #require(try JSONSerialization.jsonObject(with: Data(listed.utf8)) as? [[String: Any]])
        #expect(stored.count <= 3_300 && stored.count >= 3_000)
        let expected = Set(
            stored.compactMap { entry in (entry["name"] as? String).map { "\($0)@\(entry["domain"] ?? "")" } }
        )
        #expect(await eventually { Set(subscriber.cookies.map { "\($0.name)@\($0.domain)" }) == expected })
    }

    /// One change too large to push (3,000 cookies of 500 bytes inserted at once, over 1 MiB
    /// of event): subscribers get a marker, catch up from a snapshot, and end with keyjard's jar;
    /// so does a replica that does not listen, at its next lookup.
    @Test func aChangeTooLargeToPushSendsSubscribersToASnapshot() async throws {
        let daemon = try await DaemonProcess()
        let subscriber = try SharedCookieStorage(configuration: .init(socketPath: daemon.socketPath, autoStart: false))
        let resynchronised = ResynchronisationCounter(client: subscriber.client)
        // A Keyjar listener is told too, without NotificationCenter.
        let listenerResynchronised = Locked(0)
        let listener = subscriber.client.addListener { change in
            if change == .resynchronised { listenerResynchronised.withLock { $0 += 1 } }
        }
        defer { listener.cancel() }
        let writer = try KeyjarClient(
            configuration: .init(socketPath: daemon.socketPath, autoStart: false, keepsReplica: false)
        )
        let value = String(repeating: "v", count: 500)
        let cookies = (0..<3_000).map { Cookie(name: "n", value: value, domain: "site\($0).example", hostOnly: false) }
        let reader = try SharedCookieStorage(configuration: .init(socketPath: daemon.socketPath, autoStart: false))
        let outcomes = try writer.insertCookies(cookies)
        #expect(outcomes.allSatisfy { $0.isStored }, "\(outcomes.filter { !$0.isStored }.prefix(3))")
        #expect(await eventually { subscriber.cookies.count == 3_000 })
        #expect(resynchronised.count > 0)
        #expect(listenerResynchronised.withLock { $0 } == resynchronised.count)
        // A replica that does not listen catches up on its first lookup, snapshot included.
        #expect(!reader.client.isListening)
        #expect(reader.cookies.count == 3_000)
    }

    @Test func jsonExportImportsIntoAnotherStoreUnchanged() async throws {
        let first = try await DaemonProcess()
        let second = try await DaemonProcess()
        let (from, to) = (KeyjarCLI(daemon: first), KeyjarCLI(daemon: second))

        try await from.ok(
            "cookie",
            "set",
            "--url",
            "https://www.example.com/",
            "sid=42; Secure; HttpOnly; SameSite=Strict; Max-Age=600"
        )
        try await from.ok("cookie", "set", "--url", "https://www.example.com/", "plain=1")
        let exported = first.directory.path("cookies.json")
        try await from.ok("cookie", "export", "-o", exported)
        // Cookies can be as good as passwords: the file is for its owner only.
        #expect(fileMode(exported, followingLinks: true).map { $0 & 0o777 } == 0o600)

        #expect(
            try await to.ok("cookie", "import", exported) == "read 2 cookies: 2 kept (2 new, 0 replacing stored ones)\n"
        )
        let before = try #require(try await from.json("cookie", "list", "--json") as? [[String: Any]])
        let after = try #require(try await to.json("cookie", "list", "--json") as? [[String: Any]])
        for key in [
            "name", "value", "domain", "hostOnly", "path", "expires", "secure", "httpOnly", "sameSite", "creation",
        ] {
            #expect(before.map { "\($0[key] ?? "nil")" } == after.map { "\($0[key] ?? "nil")" }, "\(key)")
        }
        // Standard input works too, with the format given.
        let json = try await from.ok("cookie", "export", "--format", "json")
        try await to.ok("cookie", "clear", "--all")
        let piped = try await to.run(["cookie", "import", "--format", "json", "-"], input: json)
        #expect(piped.status == 0 && piped.output == "read 2 cookies: 2 kept (2 new, 0 replacing stored ones)\n")
    }
}

/// Counts a client's resynchronisations (snapshots that replaced its replica).
final class ResynchronisationCounter: @unchecked Sendable {
    // @unchecked: the count is behind its lock; the observer token is set once in init.
    private let lock = NSLock()
    private var value = 0
    private var observer: (any NSObjectProtocol)?

    init(client: KeyjarClient) {
        client.startPostingNotifications()
        observer = NotificationCenter.default.addObserver(
            forName: KeyjarNotifications.resynchronised,
            object: client,
            queue: nil
        ) {
            [weak self] _ in self?.lock.withLock { self?.value += 1 }
        }
    }

    deinit { observer.map(NotificationCenter.default.removeObserver) }

    var count: Int { lock.withLock { value } }
}
