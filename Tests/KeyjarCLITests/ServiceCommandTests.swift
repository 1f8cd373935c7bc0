import Foundation
import Glibc
import KeyjarTestSupport
import Testing

/// status, policy and watch.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ServiceCommandTests {
    @Test func statusReportsTheServiceItTalksTo() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        try await keyjar.ok("cookie", "set", "--url", "https://example.com/", "a=1", "b=2")

        let status = try #require(try await keyjar.json("status", "--json") as? [String: Any])
        #expect(status["pid"] as? Int == Int(daemon.pid))
        #expect(status["socketPath"] as? String == daemon.socketPath)
        #expect(status["databasePath"] as? String == daemon.databasePath)
        #expect(status["cookieCount"] as? Int == 2)
        #expect(
            status["secretsBackend"] as? String == "secret-service" && status["secretsHealthy"] as? Bool == true,
            "\(status["secretsDetail"] ?? "no detail")"
        )
        #expect(status["acceptPolicy"] as? String == "always")
        #expect((status["schemaVersion"] as? Int ?? 0) >= 1)

        let text = try await keyjar.ok("status")
        #expect(text.contains("keyjard: reachable") && text.contains("socket: \(daemon.socketPath)"))
        #expect(text.contains("cookies: 2") && text.contains("accept policy: always"))
    }

    @Test func anUnreachableKeyjardHasItsOwnExitStatus() async throws {
        let directory = try TemporaryDirectory()
        var environment = ProcessInfo.processInfo.environment
        environment["KEYJAR_SOCKET"] = directory.path("nobody.sock")
        environment["KEYJAR_NO_AUTOSTART"] = "1"
        environment.merge(KeyjarCLI.unservedDatabase(in: directory)) { _, new in new }
        for arguments in [["status"], ["cookie", "list"], ["credential", "list"], ["policy", "get"]] {
            let result = try await runCommand(KeyjarCLI.binary, arguments, environment: environment)
            #expect(result.status == 3, "\(arguments)")
            #expect(
                result.output.isEmpty && result.error.hasPrefix("keyjar: keyjard is not reachable"),
                "\(result.error)"
            )
            #expect(result.error.split(separator: "\n").count == 1)
        }
        environment.removeValue(forKey: "KEYJAR_NO_AUTOSTART")
        let noStart = try await runCommand(KeyjarCLI.binary, ["status", "--no-start"], environment: environment)
        #expect(noStart.status == 3)
    }

    /// keyjard killed, a new one started, and a command run at once: the command finds the old
    /// socket refusing while the new keyjard holds the serving lock, and must wait for it rather
    /// than start a third (which would exit, "another keyjard is already serving").
    @Test func aCommandRightAfterARestartWaitsForTheKeyjardThatIsStarting() async throws {
        var daemon = try await DaemonProcess()
        var environment = ProcessInfo.processInfo.environment
        environment["KEYJAR_SOCKET"] = daemon.socketPath
        // The daemon's database: a keyjard the command starts must meet the serving lock of
        // the one starting, and must not serve the suite's default database, whose pointer
        // other tests' clients would follow.
        environment["KEYJAR_DATABASE"] = daemon.databasePath
        environment["KEYJAR_KEYJARD"] = DaemonProcess.binary
        environment.removeValue(forKey: "KEYJAR_NO_AUTOSTART")
        // Guards against a hang, not limits a busy machine may reach: the race is the test.
        environment["KEYJAR_TIMEOUT"] = "600"
        environment["KEYJAR_START_TIMEOUT"] = "600"
        for round in 0..<15 {
            await daemon.crash()
            // Started without waiting for its "ready" line: the command races its start-up.
            let next = try spawnQuietly(
                DaemonProcess.binary,
                ["--socket", daemon.socketPath, "--database", daemon.databasePath],
                environment: environment
            )
            let result = try await runCommand(KeyjarCLI.binary, ["status", "--json"], environment: environment)
            let status = try? JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any]
            // Usually the one that was starting; a keyjard the command started itself, when it
            // came before the new one took the lock.
            let serving = (status?["pid"] as? Int).map { pid_t($0) }
            kill(next, SIGKILL)
            _ = await waitForExit(next)
            if let serving {
                kill(serving, SIGKILL)
                try await waitUntil("keyjard \(serving) ending", every: .milliseconds(1)) { kill(serving, 0) != 0 }
            }
            // The auto-started keyjard's log says why, when it was the command's own that failed.
            let log = (try? String(contentsOfFile: daemon.directory.path("run/keyjard.log"), encoding: .utf8)) ?? ""
            #expect(result.status == 0 && serving != nil, "round \(round): \(result.error)\n\(log)")
            if result.status != 0 { break }
            daemon = try await daemon.restarted()
        }
        #expect(await daemon.stop() == 0)
    }

    @Test func policyAndDomainRulesGovernWhatIsStored() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)

        #expect(try await keyjar.ok("policy", "get") == "always\n")
        for policy in ["never", "main-document-domain", "no-third-party", "grandfathered-third-party", "always"] {
            try await keyjar.ok("policy", "set", policy)
            #expect(try await keyjar.ok("policy", "get") == policy + "\n")
        }
        let unknown = try await keyjar("policy", "set", "sometimes")
        #expect(unknown.status == 2 && unknown.error.contains("'sometimes' is invalid"))

        // A third-party cookie is refused under no-third-party, with the reason
        try await keyjar.ok("policy", "set", "no-third-party")
        let thirdParty = try await keyjar(
            "cookie",
            "set",
            "--url",
            "https://ads.test/",
            "--main-document",
            "https://news.example/",
            "t=1"
        )
        #expect(thirdParty.status == 1 && thirdParty.error.contains("cookie 't=1' was not stored"))
        try await keyjar.ok(
            "cookie",
            "set",
            "--url",
            "https://ads.test/",
            "--main-document",
            "https://ads.test/",
            "t=1"
        )

        // Domain rules outrank it
        try await keyjar.ok("policy", "domain", "allow", "ads.test")
        try await keyjar.ok(
            "cookie",
            "set",
            "--url",
            "https://ads.test/",
            "--main-document",
            "https://news.example/",
            "u=1"
        )
        try await keyjar.ok("policy", "domain", "block", ".Tracker.Example")
        try await keyjar.ok("policy", "domain", "session-only", "news.example")
        #expect(
            try await keyjar.ok("policy", "domain", "list")
                == "ads.test allow\nnews.example session-only\ntracker.example block\n"
        )
        let blocked = try await keyjar("cookie", "set", "--url", "https://www.tracker.example/", "b=1")
        #expect(blocked.status == 1)
        try await keyjar.ok("cookie", "set", "--url", "https://news.example/", "s=1; Max-Age=3600")
        #expect(
            try await keyjar.ok("cookie", "list", "--domain", "news.example").contains(
                "s=1; domain=news.example; path=/; session"
            )
        )

        let policy = try #require(try await keyjar.json("policy", "get", "--json") as? [String: Any])
        #expect(policy["acceptPolicy"] as? String == "no-third-party")
        #expect(
            policy["domainRules"] as? [String: String] == [
                "ads.test": "allow", "news.example": "session-only", "tracker.example": "block",
            ]
        )

        try await keyjar.ok("policy", "domain", "remove", "tracker.example")
        let again = try await keyjar("policy", "domain", "remove", "tracker.example")
        #expect(again.status == 1 && again.error.contains("no rule for tracker.example"))
        // One normaliser for every domain: a URL names its host, Unicode is stored as IDNA, case
        // and dots at the ends do not matter; what could never match is refused.
        try await keyjar.ok("policy", "domain", "block", "https://X.example/")
        try await keyjar.ok("policy", "domain", "block", "Bücher.Example.")
        for never in ["*.wild.example", "a b.example", "..example", ""] {
            let refused = try await keyjar("policy", "domain", "block", never)
            #expect(refused.status == 2 && refused.error.contains("is not a domain name"), "\(never)")
        }
        #expect(
            try await keyjar.json("policy", "domain", "list", "--json") as? [String: String] == [
                "ads.test": "allow", "news.example": "session-only", "x.example": "block",
                "xn--bcher-kva.example": "block",
            ]
        )
    }

    /// Starts `keyjar watch`; returns once it is subscribed (it says so on standard error,
    /// the line returned): only then may the test make changes.
    static func watch(_ arguments: [String], _ keyjar: KeyjarCLI) async throws -> (ChildProcess, Pipe, String?) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: KeyjarCLI.binary)
        process.arguments = ["watch"] + arguments
        process.environment = keyjar.environment
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        return (process, output, await DaemonProcess.readLine(from: error.fileHandleForReading))
    }

    /// watch speaks in words, not the wire's names (`defaultChanged`, `sessionEnded`).
    @Test func watchDescribesChangesInWords() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let url = "https://\(uniqueHost("words"))"
        try await keyjar.ok(["credential", "add", "--url", url, "--user", "ann", "--password-stdin"], input: "a")
        try await keyjar.ok(["credential", "add", "--url", url, "--user", "ben", "--password-stdin"], input: "b")
        let (process, output, ready) = try await Self.watch(["--count", "1"], keyjar)
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        #expect(ready?.hasPrefix("keyjar: watching") == true)
        try await keyjar.ok("credential", "default", "--url", url, "--user", "ben")
        let line = try #require(await DaemonProcess.readLine(from: output.fileHandleForReading))
        try await waitForExit(process)
        #expect(line.contains("credentials: made default ben for \(url)"), "\(line)")
        #expect(!line.contains("defaultChanged"))
    }

    @Test func watchPrintsEachChangeAsItHappens() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)

        for json in [false, true] {
            let (process, output, ready) = try await Self.watch(["--count", "3"] + (json ? ["--json"] : []), keyjar)
            defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
            #expect(ready?.hasPrefix("keyjar: watching \(daemon.socketPath)") == true)

            let user = json ? "jdoe" : "doe"
            try await keyjar.ok("cookie", "set", "--url", "https://watch.example/", "w=1")
            try await keyjar.ok("policy", "domain", "block", "blocked-\(user).example")
            try await keyjar.ok(
                ["credential", "add", "--url", "https://\(uniqueHost("watch"))", "--user", user, "--password-stdin"],
                input: "watch-secret\n"
            )

            var lines: [String] = []
            for _ in 0..<3 {
                guard let line = await DaemonProcess.readLine(from: output.fileHandleForReading) else { break }
                lines.append(line)
            }
            try await waitForExit(process)
            #expect(process.terminationStatus == 0)
            #expect(lines.count == 3)
            #expect(!lines.joined().contains("watch-secret"))
            if json {
                let objects = lines.compactMap {
                    try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
                }
                #expect(
                    objects.map { $0["notification"] as? String } == [
                        "NSHTTPCookieManagerCookiesChangedNotification",
                        "NSHTTPCookieManagerAcceptPolicyChangedNotification",
                        "NSURLCredentialStorageChangedNotification",
                    ]
                )
                let sequences = objects.compactMap { $0["sequence"] as? Int }
                #expect(sequences.count == 3 && sequences == sequences.sorted())
            } else {
                #expect(lines.first?.hasSuffix(" cookies: added w for watch.example/") == true, "\(lines)")
                #expect(lines.dropFirst().first?.contains("policy: always; rules: blocked-doe.example block") == true)
                #expect(lines.last?.contains("credentials: added doe for https://watch-") == true, "\(lines)")
            }
        }
    }
}
