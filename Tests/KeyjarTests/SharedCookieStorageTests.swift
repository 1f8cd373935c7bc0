import Foundation
import Glibc
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarTestSupport
import Testing

func storage(for daemon: some KeyjarService) throws -> SharedCookieStorage {
    SharedCookieStorage(client: try KeyjarClient(configuration: .init(socketPath: daemon.socketPath, autoStart: false)))
}

@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct SharedCookieStorageTests {
    @Test func twoClientsShareCookiesAndTheOtherIsNotified() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let writer = try storage(for: daemon)
        let reader = try storage(for: daemon)
        let changes = reader.client.changes()
        reader.client.startPostingNotifications()
        let observed = LockedCounter()
        let observer = NotificationCenter.default.addObserver(
            forName: KeyjarNotifications.cookiesChanged,
            object: reader.client,
            queue: nil
        ) { _ in observed.increment() }
        defer { NotificationCenter.default.removeObserver(observer) }
        // A third client that never switched notifications on posts none, yet reads the change.
        let quiet = try storage(for: daemon)
        let quietObserved = LockedCounter()
        let quietObserver = NotificationCenter.default.addObserver(
            forName: KeyjarNotifications.cookiesChanged,
            object: quiet.client,
            queue: nil
        ) { _ in quietObserved.increment() }
        defer { NotificationCenter.default.removeObserver(quietObserver) }

        let site = try #require(URL(string: "https://www.example.com/app"))
        await #expect(
            try writer.storeCookies(
                fromResponseHeaders: ["sid=42; Domain=example.com; Secure", "bad=1; Domain=com"],
                for: site,
                mainDocumentURL: nil
            ) == [.stored, .rejected(reason: "Domain=com is a public suffix")]
        )
        // Read-your-writes: the writer's replica has it the moment the call returns.
        #expect(writer.cookieHeader(for: try #require(URL(string: "https://api.example.com/"))) == "sid=42")
        // The reader gets the change as a typed event and as an Apple-named notification.
        var iterator = changes.makeAsyncIterator()
        let event = try #require(await iterator.next())
        guard case .cookies(let cookieChanges) = event.event else {
            Issue.record("expected a cookie change, got \(event)")
            return
        }
        #expect(cookieChanges.map(\.cookie.name) == ["sid"])
        #expect(await eventually { observed.value == 1 })
        #expect(reader.cookieHeader(for: try #require(URL(string: "https://example.com/"))) == "sid=42")
        #expect(reader.cookies.map(\.name) == ["sid"])
        #expect(quiet.cookies.map(\.name) == ["sid"])
        #expect(quietObserved.value == 0 && !quiet.client.isListening)

        // Deleting and policy changes travel the same way.
        try await writer.setCookieAcceptPolicy(.noThirdParty)
        #expect(await eventually { reader.cookieAcceptPolicy == .noThirdParty })
        try await writer.deleteCookie(try #require(writer.cookies.first))
        #expect(await eventually { reader.cookies.isEmpty })
        #expect(throws: KeyjarClientError.self) {
            try writer.setCookie(Cookie(name: "__Host-x", value: "1", domain: "example.com", hostOnly: true))
        }
    }

    @Test func setCookiesForAURLAppliesTheAcceptPolicy() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let storage = try storage(for: daemon)
        let url = try #require(URL(string: "https://cdn.tracker.net/pixel"))
        let main = try #require(URL(string: "https://news.org/"))
        let later = Date().addingTimeInterval(3600)
        let own = Cookie(name: "t", value: "1", domain: "tracker.net", expires: later)
        let foreign = Cookie(name: "x", value: "1", domain: "other.com")
        // Always: stored for the URL's site; a cookie for another domain is refused.
        await #expect(
            try storage.setCookies([own, foreign], for: url, mainDocumentURL: main)
                == [.stored, .rejected(reason: "Domain=other.com does not match the host cdn.tracker.net")]
        )
        // No third party: a cookie for a third-party URL is refused with the reason.
        try await storage.setCookieAcceptPolicy(.noThirdParty)
        #expect(await eventually { storage.cookieAcceptPolicy == .noThirdParty })
        let refused = try await storage.setCookies(
            [Cookie(name: "u", value: "1", domain: "tracker.net")],
            for: url,
            mainDocumentURL: main
        )
        #expect(refused == [.rejected(reason: "tracker.net is a third party to the main document's site news.org")])
        // A session-only rule keeps the cookie but drops its expiry.
        try await storage.setDomainRule(.sessionOnly, for: "tracker.net")
        #expect(await eventually { storage.policy.domainRules["tracker.net"] == .sessionOnly })
        await #expect(
            try storage.setCookies(
                [Cookie(name: "s", value: "1", domain: "tracker.net", expires: later)],
                for: url,
                mainDocumentURL: main
            ) == [.stored]
        )
        #expect(storage.cookies.first { $0.name == "s" }?.isSession == true)
        #expect(storage.cookies.first { $0.name == "t" }?.isSession == false)
    }

    /// As `HTTPCookieStorage.setCookie(_:)`: stored only if the accept policy permits.
    @Test func setCookieHonoursTheAcceptPolicy() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let storage = try storage(for: daemon)
        let later = Date().addingTimeInterval(3600)
        try await storage.setCookieAcceptPolicy(.never)
        do {
            try await storage.setCookie(Cookie(name: "n", value: "1", domain: "example.com"))
            Issue.record("a cookie was stored under the accept policy 'never'")
        } catch {
            #expect(error.code == .refused)
            #expect(error.message == "The accept policy 'never' refuses this cookie")
        }
        #expect(storage.cookies.isEmpty)
        // A domain rule outranks the policy: a session-only one stores the cookie without its
        // expiry, a blocking one refuses it whatever the policy.
        try await storage.setDomainRule(.sessionOnly, for: "example.com")
        try await storage.setCookie(
            Cookie(name: "s", value: "1", domain: "www.example.com", hostOnly: true, expires: later)
        )
        #expect(storage.cookies.map(\.name) == ["s"] && storage.cookies.first?.isSession == true)
        try await storage.setCookieAcceptPolicy(.always)
        try await storage.setDomainRule(.block, for: "blocked.example")
        #expect(throws: KeyjarClientError.self) {
            try storage.setCookie(Cookie(name: "b", value: "1", domain: "blocked.example"))
        }
        // No request, so no third party: a third-party policy accepts it.
        try await storage.setCookieAcceptPolicy(.noThirdParty)
        try await storage.setCookie(Cookie(name: "t", value: "1", domain: "tracker.example", expires: later))
        #expect(storage.cookies.map(\.name).sorted() == ["s", "t"])

        let ephemeral = SharedCookieStorage.ephemeral(policy: CookiePolicy(acceptPolicy: .never))
        #expect(throws: KeyjarClientError.self) {
            try ephemeral.setCookie(Cookie(name: "e", value: "1", domain: "example.com"))
        }
        #expect(ephemeral.cookies.isEmpty)
    }

    @Test func aSeparateProcessSeesTheChangeAndIsNotified() async throws {
        let daemon = try await InProcessServer.withSecretService()
        let peer = DaemonProcess.builtExecutable(named: "KeyjarTestPeer")
        let environment = ProcessInfo.processInfo.environment.merging(
            ["KEYJAR_SOCKET": daemon.socketPath, "KEYJAR_NO_AUTOSTART": "1"]) { $1 }

        let watcher = ChildProcess()
        watcher.executableURL = URL(fileURLWithPath: peer)
        watcher.arguments = ["watch"]
        watcher.environment = environment
        let output = Pipe()
        watcher.standardOutput = output
        try watcher.run()
        // SIGKILL: nothing of it needs a clean end.
        defer { if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) } }
        #expect(await DaemonProcess.readLine(from: output.fileHandleForReading) == "watching")

        let local = try storage(for: daemon)
        try await local.storeCookies(
            fromResponseHeaders: ["fromA=1"],
            for: try #require(URL(string: "https://example.org/")),
            mainDocumentURL: nil
        )
        #expect(await DaemonProcess.readLine(from: output.fileHandleForReading) == "fromA")

        // And the other way round: the peer writes, this process's replica gets it.
        let result = try await runCommand(
            peer,
            ["set", "https://example.org/", "fromB=2; Max-Age=86400"],
            environment: environment
        )
        #expect(result.output == "stored\n", "\(result.error)")
        #expect(
            await eventually { local.cookieHeader(for: URL(string: "https://example.org/")!) == "fromA=1; fromB=2" }
        )
        let header = try await runCommand(peer, ["header", "https://example.org/"], environment: environment)
        #expect(header.output == "fromA=1; fromB=2\n")
    }

    /// Across a restart of keyjard: a client that listens reconnects by itself and announces
    /// every change in order; one that does not connects again at its next lookup or call.
    @Test(arguments: [false, true]) func aClientResynchronisesWhenKeyjardRestarts(listening: Bool) async throws {
        let daemon = try await DaemonProcess()
        let client = try storage(for: daemon)
        let stream = listening ? client.client.changes() : nil
        #expect(client.client.isListening == listening)
        let site = try #require(URL(string: "https://example.net/"))
        try await client.storeCookies(fromResponseHeaders: ["before=1; Max-Age=600"], for: site, mainDocumentURL: nil)
        #expect(await daemon.stop() == 0)
        // While keyjard is away, calls fail at once with a typed error; reads still answer.
        if listening { #expect(await eventually { !client.client.isConnected }) }
        do {
            try await client.storeCookies(fromResponseHeaders: ["during=1"], for: site, mainDocumentURL: nil)
            Issue.record("a write succeeded with keyjard stopped")
        } catch {
            #expect(error.code == .unreachable)
        }
        #expect(client.cookieHeader(for: site) == "before=1")

        let restarted = try await daemon.restarted()
        let other = try storage(for: restarted)
        try await other.storeCookies(fromResponseHeaders: ["after=1; Max-Age=600"], for: site, mainDocumentURL: nil)
        if listening {
            // The first client reconnects by itself and catches up on what it missed.
            #expect(await eventually { client.client.isConnected && client.client.sequence == 2 })
        }
        #expect(client.cookieHeader(for: site) == "before=1; after=1")
        #expect(client.client.isConnected)
        try await client.storeCookies(fromResponseHeaders: ["again=1; Max-Age=600"], for: site, mainDocumentURL: nil)
        #expect(other.cookieHeader(for: site) == "before=1; after=1; again=1")
        if let stream {
            var names: [(UInt64, String)] = []
            for await event in stream {
                guard case .cookies(let changes) = event.event else { continue }
                names.append((event.sequence, changes.map(\.cookie.name).joined(separator: ",")))
                if names.count == 3 { break }
            }
            #expect(names.map(\.0) == [1, 2, 3] && names.map(\.1) == ["before", "after", "again"])
        }
    }

    @Test func withoutAutoStartAnAbsentKeyjardIsAClearError() throws {
        let directory = try TemporaryDirectory()
        do {
            _ = try KeyjarClient(configuration: .init(socketPath: directory.path("none.sock"), autoStart: false))
            Issue.record("connected to nothing")
        } catch {
            #expect(error.code == .unreachable)
            #expect(error.message.contains("not reachable"))
        }
        // Nothing was started or waited for: no lock, log or socket beside the socket's path.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
    }

    @Test func concurrentAutoStartsStartExactlyOneKeyjard() async throws {
        let directory = try TemporaryDirectory()
        let socketPath = directory.path("run/keyjar.sock")
        let peer = DaemonProcess.builtExecutable(named: "KeyjarTestPeer")
        var environment = ProcessInfo.processInfo.environment
        environment["KEYJAR_SOCKET"] = socketPath
        environment["KEYJAR_DATABASE"] = directory.path("data/store.sqlite3")
        environment["KEYJAR_KEYJARD"] = DaemonProcess.binary
        environment.removeValue(forKey: "KEYJAR_NO_AUTOSTART")
        // Guards against a hang, not limits a busy machine may reach: the race is the test.
        environment["KEYJAR_TIMEOUT"] = "600"
        environment["KEYJAR_START_TIMEOUT"] = "600"
        // Five peers at once, spawned and reaped directly (see `spawnQuietly`).
        let pids = try (0..<5).map { index in
            try spawnQuietly(
                peer,
                ["set", "https://race.example/", "p\(index)=1; Max-Age=86400"],
                environment: environment
            )
        }
        var statuses: [Int32] = []
        for pid in pids { statuses.append(await waitForExit(pid)) }
        defer {
            // Stop the keyjard the peers started (its pid is in the lock file).
            if let pid = try? String(contentsOfFile: directory.path("run/keyjard.lock"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines), let number = Int32(pid)
            {
                kill(number, SIGTERM)
            }
        }
        #expect(statuses == Array(repeating: 0, count: 5))
        // Exactly one keyjard serves that socket.
        let serving = (try FileManager.default.contentsOfDirectory(atPath: "/proc")).filter { entry in
            guard Int32(entry) != nil,
                let commandLine = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline")
            else { return false }
            let text = String(decoding: commandLine, as: UTF8.self)
            return text.contains("keyjard") && text.contains(socketPath)
        }
        #expect(serving.count == 1, "keyjard processes: \(serving)")
        let header = try await runCommand(peer, ["header", "https://race.example/"], environment: environment)
        #expect(
            Set(header.output.trimmingCharacters(in: .newlines).components(separatedBy: "; "))
                == Set((0..<5).map { "p\($0)=1" })
        )
    }
}

final class LockedCounter: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var count = 0

    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// An application that depends on Keyjar has no keyjard beside it (its `swift build` does not
/// build one) and none on PATH, or one that cannot start: the error says what to do.
@Suite(.timeLimit(hangLimit))
struct KeyjardNotFoundTests {
    @Test(arguments: [nil, "/nonexistent/keyjard"])
    func theErrorNamesTheWaysToProvideKeyjard(explicit: String?) async throws {
        let directory = try TemporaryDirectory()
        // A copy of a Keyjar program in a directory of its own, so no keyjard is next to it.
        let program = directory.path("app")
        try await installExecutable(copying: DaemonProcess.builtExecutable(named: "KeyjarTestPeer"), to: program)
        var environment = [
            "KEYJAR_SOCKET": directory.path("run/keyjar.sock"),
            "KEYJAR_DATABASE": directory.path("data/store.sqlite3"),
            "PATH": "/usr/bin:/bin",
            "HOME": directory.path("."),
        ]
        environment["KEYJAR_KEYJARD"] = explicit
        let result = try await runCommand(program, ["header", "https://example.com/"], environment: environment)
        #expect(result.status == 1)
        #expect(result.error.contains("none was found to start"), "\(result.error)")
        #expect(result.error.contains("set KEYJAR_KEYJARD"))
        #expect(result.error.contains("swift build --product keyjard"))
        if let explicit {
            #expect(result.error.contains("KEYJAR_KEYJARD is \"\(explicit)\", which is not an executable file"))
        }
    }

    /// A `keyjard` in the working directory is never started through a relative PATH entry
    /// (`.`, `bin`, or an empty one): it would run with every secret of the user, from wherever
    /// the program happened to be started (a downloaded archive, another user's directory).
    @Test func aKeyjardFoundOnlyThroughARelativePathEntryIsNotStarted() async throws {
        let directory = try TemporaryDirectory()
        // The program in a directory of its own (no keyjard beside it); started in another.
        let programs = try TemporaryDirectory()
        let program = programs.path("app")
        try await installExecutable(copying: DaemonProcess.builtExecutable(named: "KeyjarTestPeer"), to: program)
        #expect(mkdir(directory.path("bin"), 0o700) == 0)
        let marker = directory.path("planted-keyjard-ran")
        for name in ["keyjard", "bin/keyjard"] {
            try await installExecutable(script: "#!/bin/sh\ntouch \(marker)\nexit 1\n", at: directory.path(name))
        }
        let environment = [
            "KEYJAR_SOCKET": directory.path("run/keyjar.sock"),
            "KEYJAR_DATABASE": directory.path("data/store.sqlite3"),
            "PATH": ".:bin::/usr/bin:/bin",
            "HOME": directory.path("."),
        ]
        let result = try await runCommand(
            "/bin/sh",
            ["-c", "cd \"$0\" && exec \"$1\" header https://example.com/", directory.path, program],
            environment: environment
        )
        #expect(result.status == 1)
        #expect(result.error.contains("none was found to start"), "\(result.error)")
        #expect(!FileManager.default.fileExists(atPath: marker), "a keyjard was run from a relative PATH entry")
    }

    /// A keyjard that stops before it serves: the error quotes the last line of its log, which
    /// says why, rather than only where the log is.
    @Test func aKeyjardThatStopsBeforeServingIsQuoted() async throws {
        let directory = try TemporaryDirectory()
        let keyjard = directory.path("keyjard")
        try await installExecutable(
            script: "#!/bin/sh\necho 'keyjard: cannot open the database /nowhere: permission denied' >&2\nexit 1\n",
            at: keyjard
        )
        let environment = [
            "KEYJAR_SOCKET": directory.path("run/keyjar.sock"),
            "KEYJAR_DATABASE": directory.path("data/store.sqlite3"),
            "KEYJAR_KEYJARD": keyjard,
            "PATH": "/usr/bin:/bin",
            "HOME": directory.path("."),
        ]
        let result = try await runCommand(
            DaemonProcess.builtExecutable(named: "KeyjarTestPeer"),
            ["header", "https://example.com/"],
            environment: environment
        )
        #expect(result.status == 1)
        #expect(result.error.contains("did not become ready"), "\(result.error)")
        #expect(result.error.contains("cannot open the database /nowhere: permission denied"))
    }
}
