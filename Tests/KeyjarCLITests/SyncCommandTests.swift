import Foundation
import KeyjarTestSupport
import Testing

/// `keyjar sync` between two machines: two homes, two keyjards (passwords in a file each), one
/// GnuPG key in both keyrings, a bare git repository as the remote, and the real `git`, `gpg`
/// and `pass`.
///
/// One test at a time: each has a GnuPG home whose gpg-agent holds two of the user's inotify
/// instances until the home is removed (``ConcurrencyGate`` says why that matters); started all
/// at once, the ten held twenty and more.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly, .serialized)
struct SyncCommandTests {
    /// One machine: its home, its keyjard, and `keyjar` run there.
    struct Machine {
        let home: TemporaryDirectory
        let daemon: DaemonProcess
        let gnupg: String

        var store: String { home.path("store") }

        var environment: [String: String] {
            var environment = ProcessInfo.processInfo.environment
            environment["HOME"] = home.path
            environment["XDG_STATE_HOME"] = home.path("state")
            environment["XDG_CONFIG_HOME"] = home.path("config")
            environment["GNUPGHOME"] = gnupg
            environment["PASSWORD_STORE_DIR"] = store
            environment["KEYJAR_SOCKET"] = daemon.socketPath
            environment["KEYJAR_NO_AUTOSTART"] = "1"
            environment["GIT_CONFIG_NOSYSTEM"] = "1"
            // keyjard's answer (git's helper waits 5 s by default) may be queued behind other
            // tests: the wait is a guard against a hang, not a measure of speed.
            environment["KEYJAR_TIMEOUT"] = "600"
            return environment
        }

        @discardableResult
        func run(
            _ arguments: [String],
            input: String = ""
        ) async throws -> (status: Int32, output: String, error: String) {
            try await runCommand(
                arguments[0].hasPrefix("/") ? arguments[0] : "/usr/bin/env",
                arguments[0].hasPrefix("/") ? Array(arguments.dropFirst()) : arguments,
                environment: environment,
                input: input
            )
        }

        @discardableResult
        func keyjar(_ arguments: String..., input: String = "") async throws -> String {
            let result = try await run([KeyjarCLI.binary] + arguments, input: input)
            #expect(result.status == 0, "keyjar \(arguments.joined(separator: " ")): \(result.error)")
            return result.output
        }

        func add(_ host: String, user: String, password: String) async throws {
            try await keyjar(
                "credential",
                "add",
                "--url",
                "https://\(host)",
                "--user",
                user,
                "--password-stdin",
                input: password + "\n"
            )
        }

        /// What git's helper answers for the host: the password, or nil.
        func gitPassword(_ host: String) async throws -> String? {
            let answer = try await keyjar("git-credential", "get", input: "protocol=https\nhost=\(host)\n\n")
            return answer.split(separator: "\n").first { $0.hasPrefix("password=") }.map { String($0.dropFirst(9)) }
        }
    }

    /// Two machines on one remote, and the directories they share (the key's home, the remote).
    struct TwoMachines {
        let a: Machine
        let b: Machine
        let keys: TemporaryDirectory
        let remote: TemporaryDirectory
    }

    /// Two machines on one remote, A's store made with the key, B's cloned.
    func twoMachines() async throws -> TwoMachines {
        let keys = try TemporaryDirectory()
        let gnupg = keys.path("gnupg")
        try FileManager.default.createDirectory(
            atPath: gnupg,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        var environment = ProcessInfo.processInfo.environment
        environment["GNUPGHOME"] = gnupg
        let made = try await runCommand(
            "/usr/bin/gpg",
            [
                "--batch", "--passphrase", "", "--quick-gen-key", "Keyjar Sync <sync@keyjar.test>", "future-default",
                "default", "never",
            ],
            environment: environment
        )
        #expect(made.status == 0, "\(made.error)")
        let remote = try TemporaryDirectory()
        #expect(try await runCommand("/usr/bin/git", ["init", "-q", "--bare", remote.path("store.git")]).status == 0)
        func machine() async throws -> Machine {
            Machine(
                home: try TemporaryDirectory(),
                daemon: try await DaemonProcess(arguments: ["--secrets", "file"]),
                gnupg: gnupg
            )
        }
        let a = try await machine()
        let b = try await machine()
        try await a.keyjar("sync", "init", a.store, "--key", "sync@keyjar.test")
        #expect(
            try await a.run(["git", "-C", a.store, "remote", "add", "origin", remote.path("store.git")]).status == 0
        )
        try await a.keyjar("sync")
        try await b.keyjar("sync", "init", remote.path("store.git"), "--store", b.store)
        return TwoMachines(a: a, b: b, keys: keys, remote: remote)
    }

    @Test func aCredentialAddedOnOneMachineAnswersGitOnTheOther() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        let host = uniqueHost("sync")
        try await a.add(host, user: "alice", password: "from-a")
        let synced = try await a.keyjar("sync")
        #expect(synced.contains("1 exported"), "\(synced)")
        #expect(try await b.gitPassword(host) == nil)
        let pulled = try await b.keyjar("sync")
        #expect(pulled.contains("1 imported"), "\(pulled)")
        #expect(try await b.gitPassword(host) == "from-a")
        // pass itself reads the entry: the password first, then login and url.
        let shown = try await b.run(["pass", "show", "\(host)/alice"])
        #expect(shown.status == 0, "\(shown.error)")
        #expect(shown.output.hasPrefix("from-a\nlogin: alice\nurl: https://\(host):443/\n"), "\(shown.output)")
        // A change on A reaches B too; a sync with nothing new changes nothing.
        try await a.add(host, user: "alice", password: "changed-on-a")
        try await a.keyjar("sync")
        try await b.keyjar("sync")
        #expect(try await b.gitPassword(host) == "changed-on-a")
        let idle = try await b.keyjar("sync")
        #expect(idle.contains("0 imported, 0 exported, 0 removed from Keyjar, 0 removed from the store"), "\(idle)")
        // The password is in no file in clear: not the store's (work tree, git's objects, the
        // remote's), not sync's state.
        for directory in [a.store, b.store, machines.remote.path, a.home.path("state"), b.home.path("state")] {
            let found = try await runCommand("/usr/bin/grep", ["-rlaF", "changed-on-a", directory])
            #expect(found.status == 1 && found.output.isEmpty, "\(directory): \(found.output)")
        }
    }

    @Test func passInsertOnOneMachineReachesKeyjarOnTheOther() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        let host = uniqueHost("sync-insert")
        let inserted = try await b.run(
            ["pass", "insert", "-m", "\(host)/bob"],
            input: "typed-into-pass\na note of bob's\n"
        )
        #expect(inserted.status == 0, "\(inserted.error)")
        try await b.keyjar("sync")
        #expect(try await b.gitPassword(host) == "typed-into-pass")
        try await a.keyjar("sync")
        #expect(try await a.gitPassword(host) == "typed-into-pass")
        // Changed in Keyjar on A: the entry is written again, the note kept.
        try await a.add(host, user: "bob", password: "changed-in-keyjar")
        try await a.keyjar("sync")
        try await b.keyjar("sync")
        let shown = try await b.run(["pass", "show", "\(host)/bob"])
        #expect(
            shown.output.hasPrefix("changed-in-keyjar\n") && shown.output.contains("\na note of bob's\n"),
            "\(shown.output)"
        )
    }

    /// Two entries a user filed for one credential: the same one is synced on every run (the
    /// first by name, where Keyjar files neither), the other is reported and left as it is.
    @Test func twoEntriesNamingOneCredentialSyncTheSameOneEveryTime() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let b = machines.b
        let host = uniqueHost("sync-twice")
        for (path, password) in [("work/\(host)", "second-by-name"), ("personal/\(host)", "first-by-name")] {
            let inserted = try await b.run(
                ["pass", "insert", "-m", path],
                input: "\(password)\nlogin: alice\nurl: https://\(host)/\n"
            )
            #expect(inserted.status == 0, "\(inserted.error)")
        }
        for _ in 0..<2 {
            let synced = try await b.keyjar("sync")
            #expect(
                synced.contains("skipped: work/\(host): names the same as personal/\(host), which is the entry synced"),
                "\(synced)"
            )
            #expect(try await b.gitPassword(host) == "first-by-name")
        }
        // A change in Keyjar goes to the entry synced, and to no other.
        try await b.add(host, user: "alice", password: "changed-in-keyjar")
        try await b.keyjar("sync")
        let personal = try await b.run(["pass", "show", "personal/\(host)"])
        let work = try await b.run(["pass", "show", "work/\(host)"])
        #expect(personal.output.hasPrefix("changed-in-keyjar\n"), "\(personal.output)")
        #expect(work.output.hasPrefix("second-by-name\n"), "\(work.output)")
    }

    /// A credential whose password went missing from one machine's secret store is not a
    /// removal: its entry stays, and the other machine keeps the password.
    @Test func aPasswordMissingHereRemovesNothing() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        let host = uniqueHost("sync-missing")
        try await a.add(host, user: "alice", password: "kept-elsewhere")
        try await a.keyjar("sync")
        try await b.keyjar("sync")
        // A's passwords file loses every item (keyjard reads it on every call).
        let secrets = a.daemon.directory.path("data/secrets.json")
        try Data(#"{"format":"org.keyjar.secrets","items":[],"version":1}"#.utf8).write(
            to: URL(fileURLWithPath: secrets)
        )
        let synced = try await a.keyjar("sync")
        #expect(synced.contains("0 removed from the store"), "\(synced)")
        try await b.keyjar("sync")
        #expect(try await b.gitPassword(host) == "kept-elsewhere")
        let files = try await a.run(["git", "-C", a.store, "ls-files"])
        #expect(files.output.contains("\(host)/alice.gpg"), "\(files.output)")
    }

    @Test func aRemovalReachesTheOtherMachineButNeverBeatsAChange() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        let gone = uniqueHost("sync-gone")
        let kept = uniqueHost("sync-kept")
        try await a.add(gone, user: "alice", password: "one")
        try await a.add(kept, user: "alice", password: "two")
        try await a.keyjar("sync")
        try await b.keyjar("sync")
        // Removed on A: removed on B after the syncs.
        try await a.keyjar("credential", "remove", "--url", "https://\(gone)", "--user", "alice")
        // Removed on A, changed on B before either synced: the change wins on both.
        try await a.keyjar("credential", "remove", "--url", "https://\(kept)", "--user", "alice")
        try await b.add(kept, user: "alice", password: "two-changed-on-b")
        try await a.keyjar("sync")
        try await b.keyjar("sync")
        try await a.keyjar("sync")
        #expect(try await b.gitPassword(gone) == nil)
        #expect(try await a.gitPassword(kept) == "two-changed-on-b")
        #expect(try await b.gitPassword(kept) == "two-changed-on-b")
    }

    /// Both machines changed one credential before either synced: the later change wins on
    /// both, by the time keyjard recorded for each, and the other stays in git's history.
    @Test func oneEntryChangedOnBothMachinesKeepsTheLaterAndLosesNeither() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        let host = uniqueHost("sync-both")
        try await a.add(host, user: "alice", password: "first")
        try await a.keyjar("sync")
        try await b.keyjar("sync")
        try await a.add(host, user: "alice", password: "changed-on-a")
        try await b.add(host, user: "alice", password: "changed-on-b")
        try await a.keyjar("sync")
        let second = try await b.keyjar("sync")
        #expect(second.contains("conflict: "), "\(second)")
        try await a.keyjar("sync")
        // The later change (B's) on both.
        #expect(try await a.gitPassword(host) == "changed-on-b")
        #expect(try await b.gitPassword(host) == "changed-on-b")
        // The other version is in git's history.
        let history = try await b.run(["git", "-C", b.store, "log", "--format=%H", "--", "\(host)/alice.gpg"])
        var versions = Set<String>()
        for commit in history.output.split(separator: "\n") {
            let shown = try await b.run([
                "sh", "-c", "git -C \"$0\" show \"$1\" | gpg --quiet --batch --decrypt", b.store,
                "\(commit):\(host)/alice.gpg",
            ])
            if let first = shown.output.split(separator: "\n").first { versions.insert(String(first)) }
        }
        #expect(versions.isSuperset(of: ["changed-on-a", "changed-on-b"]), "\(versions)")
    }

    /// Fifty rounds of a change on one machine and a sync on one of them killed (SIGKILL) at a
    /// random moment, three times in four: once both have synced to the end, each credential
    /// on both machines is the last value written to it, on either.
    @Test func killsDuringFiftySyncsLoseNothing() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SplitMix64(seed: seed)
        let hosts = (0..<4).map { uniqueHost("sync-kill\($0)") }
        var latest: [String: String] = [:]
        var killed = 0
        for round in 0..<50 {
            let writer = Bool.random(using: &random) ? a : b
            let host = hosts[Int.random(in: 0..<hosts.count, using: &random)]
            let password = "round-\(round)"
            try await writer.add(host, user: "alice", password: password)
            latest[host] = password
            let syncer = Bool.random(using: &random) ? a : b
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: KeyjarCLI.binary)
            process.arguments = ["sync"]
            process.environment = syncer.environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            if Int.random(in: 0..<4, using: &random) != 0 {
                // Where the kill lands is the point: anywhere in the sync, or after it.
                try await Task.sleep(for: .milliseconds(Int.random(in: 0..<250, using: &random)))
                kill(process.processIdentifier, SIGKILL)
                killed += 1
            }
            try await waitForExit(process)
        }
        for machine in [a, b, a, b] {
            let finished = try await machine.run([KeyjarCLI.binary, "sync"])
            #expect(finished.status == 0, "seed \(seed): \(finished.error)")
        }
        #expect(killed > 20)
        // Nothing but entries reached the store: no half-written file of a killed sync.
        let tracked = try await a.run(["git", "-C", a.store, "ls-files"])
        #expect(!tracked.output.contains(".keyjar-new"), "\(tracked.output)")
        for (host, password) in latest {
            #expect(try await a.gitPassword(host) == password, "seed \(seed): \(host) on A")
            #expect(try await b.gitPassword(host) == password, "seed \(seed): \(host) on B")
        }
    }

    /// `keyjar sync --watch`: a credential changed on A is pushed without anyone running a sync,
    /// and B's watch pulls it on its interval.
    @Test func watchingSyncsEachChangeAndPullsOnItsInterval() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        func watch(_ machine: Machine, interval: String) throws -> (ChildProcess, FileHandle) {
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: KeyjarCLI.binary)
            process.arguments = ["sync", "--watch", "--interval", interval]
            process.environment = machine.environment
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            return (process, output.fileHandleForReading)
        }
        /// The next report line that says `what`, or nil once the output ends.
        func next(_ lines: FileHandle, saying what: String) async -> String? {
            while let line = await DaemonProcess.readLine(from: lines) {
                if line.contains(what) { return line }
            }
            return nil
        }
        let (onA, linesOfA) = try watch(a, interval: "3600")
        let (onB, linesOfB) = try watch(b, interval: "1")
        defer {
            onA.terminate()
            onB.terminate()
        }
        // Both made their first sync.
        #expect(await next(linesOfA, saying: "synced with") != nil)
        #expect(await next(linesOfB, saying: "synced with") != nil)
        let host = uniqueHost("sync-watch")
        try await a.add(host, user: "alice", password: "watched")
        #expect(await next(linesOfA, saying: "1 exported") != nil)
        #expect(await next(linesOfB, saying: "1 imported") != nil)
        #expect(try await b.gitPassword(host) == "watched")
    }

    /// A watch whose sync cannot reach the remote says so and keeps watching: once the remote
    /// is back, its next sync pushes what was changed meanwhile.
    @Test func aWatchOutlivesAnUnreachableRemote() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        let remote = machines.remote.path("store.git")
        #expect(rename(remote, remote + ".away") == 0)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: KeyjarCLI.binary)
        process.arguments = ["sync", "--watch", "--interval", "1"]
        process.environment = a.environment
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        defer { process.terminate() }
        let host = uniqueHost("sync-watch-offline")
        try await a.add(host, user: "alice", password: "made-while-away")
        let failure = await DaemonProcess.readLine(from: errors.fileHandleForReading)
        #expect(failure?.contains("cannot reach origin") == true, "\(failure ?? "(the watch ended)")")
        #expect(process.isRunning)
        #expect(rename(remote + ".away", remote) == 0)
        // The next sync that reaches the remote pushes (the change was committed while away).
        while let line = await DaemonProcess.readLine(from: output.fileHandleForReading), !line.contains("synced with")
        {}
        try await b.keyjar("sync")
        #expect(try await b.gitPassword(host) == "made-while-away")
    }

    /// A sync with the remote unreachable syncs this machine's side, says it did not push, and
    /// the next sync pushes what it committed.
    @Test func anUnreachableRemoteLosesNothingAndTheNextSyncPushes() async throws {
        let machines = try await twoMachines()
        defer { withExtendedLifetime(machines) {} }
        let (a, b) = (machines.a, machines.b)
        let host = uniqueHost("sync-offline")
        try await a.add(host, user: "alice", password: "made-offline")
        let remote = machines.remote.path("store.git")
        #expect(rename(remote, remote + ".away") == 0)
        let offline = try await a.run([KeyjarCLI.binary, "sync"])
        #expect(offline.status == 1)
        #expect(
            offline.error.contains("cannot reach origin") && offline.error.contains("the next sync pushes"),
            "\(offline.error)"
        )
        #expect(rename(remote + ".away", remote) == 0)
        let online = try await a.keyjar("sync")
        #expect(online.contains("0 exported"), "committed before: \(online)")
        try await b.keyjar("sync")
        #expect(try await b.gitPassword(host) == "made-offline")
    }
}
