import Foundation
import Glibc
import KeyjarTestSupport
import Testing

/// `keyjar run --env NAME=URL[#user] [--mask] -- COMMAND`: a real keyjard, real commands (sh),
/// and a real token endpoint on 127.0.0.1 for the tokens it refreshes.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct RunCommandTests {
    /// A shell command: what the test runs under `keyjar run`.
    private func shell(_ script: String) -> [String] { ["--", "/bin/sh", "-c", script] }

    @Test func theCommandGetsTheStoredSecretsAndItsStatusIsKeyjars() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("run")
        try await keyjar.ok(
            ["credential", "add", "--url", "https://\(host)", "--user", "alice", "--password-stdin"],
            input: "alice-secret\n"
        )
        try await keyjar.ok(
            ["credential", "add", "--url", "https://\(host)", "--user", "bob", "--password-stdin"],
            input: "bob-secret\n"
        )
        let result = try await keyjar.run(
            ["run", "--env", "FIRST=https://\(host)/any/path", "--env", "BOB=https://\(host)#bob"]
                + shell(#"printf '%s %s\n' "$FIRST" "$BOB"; exit 7"#)
        )
        // alice was stored first: the space's default, who answers unasked.
        #expect(result.status == 7, "\(result.error)")
        #expect(result.output == "alice-secret bob-secret\n")
        #expect(result.error.isEmpty, "\(result.error)")
    }

    @Test func maskedOutputNeverCarriesTheValueEvenSplitAcrossWrites() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("run-mask")
        try await keyjar.ok(
            ["credential", "add", "--url", "https://\(host)", "--user", "ci", "--password-stdin"],
            input: "tok-123456\n"
        )
        // The value whole, then split across two writes of standard output (a pause between
        // them: the halves arrive in two reads), then on standard error.
        let script = #"""
            printf 'token=%s.\n' "$TOKEN"
            printf 'tok-12'; sleep 0.2; printf '3456 and tok-12 alone\n'
            printf 'error: %s\n' "$TOKEN" >&2
            exit 3
            """#
        let masked = try await keyjar.run(["run", "--mask", "--env", "TOKEN=https://\(host)#ci"] + shell(script))
        #expect(masked.status == 3, "\(masked.error)")
        #expect(masked.output == "token=***.\n*** and tok-12 alone\n")
        #expect(masked.error == "error: ***\n")
        // Without --mask the same command shows it: what the test masks is really there.
        let plain = try await keyjar.run(["run", "--env", "TOKEN=https://\(host)#ci"] + shell(script))
        #expect(plain.output.contains("token=tok-123456."))
    }

    @Test func whatCannotBeFoundOrStartedFailsBeforeTheCommandRuns() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("run-missing")
        let directory = try TemporaryDirectory()
        let marker = directory.path("ran")
        let missing = try await keyjar.run(["run", "--env", "X=https://\(host)"] + shell("touch \(marker)"))
        #expect(missing.status == 1)
        #expect(missing.error.hasPrefix("keyjar: X: no stored credential answers at https://\(host):443"))
        #expect(!FileManager.default.fileExists(atPath: marker), "the command ran without its value")

        try await keyjar.ok(
            ["credential", "add", "--url", "https://\(host)", "--user", "u", "--password-stdin"],
            input: "v\n"
        )
        let notFound = try await keyjar.run(["run", "--env", "X=https://\(host)", "--", "/nonexistent/program"])
        #expect(notFound.status == 127 && notFound.error.contains("cannot run /nonexistent/program"))
        let maskedNotFound = try await keyjar.run([
            "run", "--mask", "--env", "X=https://\(host)", "--", "no-such-cmd-kj",
        ])
        #expect(maskedNotFound.status == 127, "\(maskedNotFound.error)")
        let plainFile = directory.path("not-a-program")
        #expect(FileManager.default.createFile(atPath: plainFile, contents: Data("text".utf8)))
        let notRunnable = try await keyjar.run(["run", "--env", "X=https://\(host)", "--", plainFile])
        #expect(notRunnable.status == 126, "\(notRunnable.error)")

        for (arguments, message) in [
            (["run", "--env", "X=https://\(host)"], "give the command to run after --"),
            (["run", "--", "true"], "give at least one --env"),
            (["run", "--env", "9X=https://\(host)", "--", "true"], "no environment variable name"),
            (["run", "--env", "X", "--", "true"], "NAME=URL[#user]"),
            (["run", "--env", "X=https://\(host)", "--env", "X=https://\(host)", "--", "true"], "given twice"),
            (["run", "--env", "X=https://u:pw@\(host)", "--", "true"], "contains a password"),
        ] {
            let refused = try await keyjar.run(arguments)
            #expect(refused.status == 2, "\(arguments)")
            #expect(refused.error.contains(message), "\(refused.error)")
            #expect(!refused.error.contains("pw@"), "a password in an argument is not repeated")
        }
    }

    /// A signal sent to keyjar (kill) reaches the command, with --mask (passed on) and without
    /// (keyjar is the command: it must not start with signals blocked); its status is keyjar's.
    @Test(arguments: [true, false])
    func signalsReachTheCommand(masked: Bool) async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("run-signal")
        try await keyjar.ok(
            ["credential", "add", "--url", "https://\(host)", "--user", "u", "--password-stdin"],
            input: "sig-secret\n"
        )
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: KeyjarCLI.binary)
        process.arguments =
            ["run"] + (masked ? ["--mask"] : []) + ["--env", "V=https://\(host)"]
            + shell(#"trap 'echo "got TERM with $V"; exit 5' TERM; echo ready; while :; do sleep 1; done"#)
        process.environment = keyjar.environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let ready = await DaemonProcess.readLine(from: output.fileHandleForReading)
        #expect(ready == "ready")
        kill(process.processIdentifier, SIGTERM)
        let said = await DaemonProcess.readLine(from: output.fileHandleForReading)
        #expect(said == (masked ? "got TERM with ***" : "got TERM with sig-secret"))
        try await waitForExit(process)
        #expect(process.terminationReason == .exit && process.terminationStatus == 5)
    }

    /// A command ended by a signal ends keyjar by the same signal (one a thread may block
    /// included); a program the command leaves running in the background holding its output
    /// does not keep keyjar waiting.
    @Test func aSignalledEndIsKeptAndBackgroundProgramsAreNotWaitedFor() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let host = uniqueHost("run-end")
        try await keyjar.ok(
            ["credential", "add", "--url", "https://\(host)", "--user", "u", "--password-stdin"],
            input: "end-secret\n"
        )
        for signal in [SIGTERM, SIGKILL] {
            let killed = ChildProcess()
            killed.executableURL = URL(fileURLWithPath: KeyjarCLI.binary)
            killed.arguments = ["run", "--mask", "--env", "V=https://\(host)"] + shell("kill -\(signal) $$")
            killed.environment = keyjar.environment
            try killed.run()
            try await waitForExit(killed)
            #expect(killed.terminationReason == .uncaughtSignal && killed.terminationStatus == signal)
        }
        // The background program would hold the pipes for a day: keyjar must end without it.
        let result = try await keyjar.run(
            ["run", "--mask", "--env", "V=https://\(host)"]
                + shell(#"sleep 86400 & echo "background $!"; echo "value $V""#)
        )
        let lines = result.output.split(separator: "\n").map(String.init)
        if let pid = lines.first.flatMap({ Int32($0.dropFirst("background ".count)) }) { kill(pid, SIGKILL) }
        #expect(result.status == 0, "\(result.error)")
        #expect(lines.count == 2 && lines[1] == "value ***", "\(result.output)")
    }

    /// An expired token Keyjar can refresh, and one that expires within the minute, are
    /// refreshed before the command gets them; one valid for an hour is handed as it is.
    @Test func expiringTokensAreRefreshedFirst() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await TokenServer(clientID: "run-test")
        let printToken = shell(#"printf '%s' "$TOKEN""#)
        var refreshes = 0
        for (lifetime, refreshed) in [(-60.0, true), (20.0, true), (3600.0, false)] {
            let issued = try await server.issue(lifetime: lifetime)
            try await keyjar.ok(
                [
                    "credential", "add", "--url", server.base, "--user", "alice", "--token-stdin",
                    "--expires", Date(timeIntervalSince1970: issued.expiresAt).ISO8601Format(),
                    "--refresh-token-stdin", "--token-endpoint", server.tokenEndpoint(), "--client-id", "run-test",
                ],
                input: "\(issued.accessToken)\n\(issued.refreshToken)\n"
            )
            let result = try await keyjar.run(["run", "--env", "TOKEN=\(server.base)"] + printToken)
            #expect(result.status == 0, "\(result.error)")
            if refreshed { refreshes += 1 }
            #expect(try await server.stats().refreshes == refreshes, "lifetime \(lifetime)")
            #expect((result.output == issued.accessToken) == !refreshed, "lifetime \(lifetime): \(result.output)")
            #expect(!result.output.isEmpty)
            #expect(!result.error.contains(issued.refreshToken))
        }
    }
}
