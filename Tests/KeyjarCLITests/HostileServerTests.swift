import Foundation
import Glibc
import KeyjarTestSupport
import Testing

/// A hostile server cannot exhaust `keyjar fetch`: a redirect's or a challenge's body is held
/// only up to 1 MiB, however far it decodes (a gzip bomb). The real `keyjar` against
/// Servers/hostile_server.py; its peak memory read from the kernel (`getrusage`), not a clock.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct HostileServerTests {
    /// `keyjar ARGUMENTS`, with its peak resident memory in KiB.
    static func measured(
        _ keyjar: KeyjarCLI,
        _ arguments: [String]
    ) async throws -> (status: Int32, output: String, error: String, peakKiB: Int) {
        let script = """
            import resource, subprocess, sys
            done = subprocess.run(sys.argv[1:], capture_output=True)
            sys.stdout.buffer.write(done.stdout); sys.stderr.buffer.write(done.stderr)
            sys.stderr.write("\\npeak %d\\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            sys.exit(done.returncode)
            """
        let result = try await runCommand(
            "/usr/bin/python3",
            ["-c", script, KeyjarCLI.binary] + arguments,
            environment: keyjar.environment
        )
        let peak = result.error.split(separator: "\n").last { $0.hasPrefix("peak ") }.flatMap { Int($0.dropFirst(5)) }
        return (result.status, result.output, result.error, try #require(peak))
    }

    /// 512 MiB of zeros behind half a megabyte of gzip, in a 302 and in a 401: the redirect is
    /// followed and the challenge's page refused, and `keyjar` never holds the body.
    @Test func aGzipBombInARedirectOrAChallengeIsNotHeld() async throws {
        let keyjar = KeyjarCLI(daemon: try await DaemonProcess())
        let server = try await HostileServer()
        let followed = try await Self.measured(keyjar, ["fetch", "-s", server.url("/bomb-redirect")])
        #expect(followed.status == 0 && followed.output == "plain", "\(followed.error)")
        #expect(followed.peakKiB < 256 << 10, "keyjar held \(followed.peakKiB) KiB")

        let challenged = try await Self.measured(keyjar, ["fetch", "-s", server.url("/bomb-challenge")])
        #expect(challenged.status != 0)
        #expect(challenged.error.contains("over 1 MiB"), "\(challenged.error)")
        #expect(challenged.peakKiB < 256 << 10, "keyjar held \(challenged.peakKiB) KiB")
    }

    /// Whether `text` holds a character that acts on a terminal (C0 but the line break, DEL,
    /// C1) or reorders a line.
    static func hasControls(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            switch scalar.value {
            case 0x0A: false
            case 0..<0x20, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
            default: false
            }
        }
    }

    /// What a server says reaches the terminal without its control characters: a realm with CSI
    /// and a right-to-left override, a status line with escape sequences, a certificate subject
    /// with all three; each shown escaped (`\u{1B}`), so the user sees it was there.
    @Test func whatAServerSaysReachesTheTerminalWithoutControls() async throws {
        let keyjar = KeyjarCLI(daemon: try await DaemonProcess())
        let server = try await HostileServer()
        let realm = try await keyjar.run(["fetch", "-s", server.url("/controls-realm")])
        #expect(realm.status == 1 && !Self.hasControls(realm.error), "\(realm.error.debugDescription)")
        #expect(realm.error.contains(#"realm "ok\u{9B}31m\u{202E}koob""#), "\(realm.error.debugDescription)")

        // -i shows a head on a terminal (script(1) gives it one) without the server's
        // controls; into a pipe, as it came, as curl writes it.
        let onTerminal = try await runCommand(
            "/usr/bin/script",
            ["-qec", "'\(KeyjarCLI.binary)' fetch -s -i '\(server.url("/controls-status"))'", "/dev/null"],
            environment: keyjar.environment
        )
        #expect(onTerminal.status == 0, "\(onTerminal.error)")
        #expect(
            onTerminal.output.contains(#"HTTP/1.1 200 OK\u{1B}]0;owned\u{7}\u{1B}[2J"#),
            "\(onTerminal.output.debugDescription)"
        )
        #expect(!onTerminal.output.unicodeScalars.contains { $0 == "\u{1B}" || $0 == "\u{7}" })
        let piped = try await keyjar.run(["fetch", "-s", "-i", server.url("/controls-status")])
        #expect(
            piped.output.hasPrefix("HTTP/1.1 200 OK\u{1B}]0;owned\u{7}\u{1B}[2J\r\n"),
            "\(piped.output.debugDescription)"
        )

        let certificate = try await keyjar.run(["fetch", "-s", "https://127.0.0.1:\(server.port)/plain"])
        #expect(
            certificate.status == 1 && !Self.hasControls(certificate.error),
            "\(certificate.error.debugDescription)"
        )
        #expect(
            certificate.error.contains(#"evil\u{1B}[2J\u{9B}31m\u{202E}drow"#),
            "\(certificate.error.debugDescription)"
        )
    }

    /// A file name a server suggests drops C0/C1 controls and bidirectional overrides, and is
    /// never one of the files Keyjar keeps beside a download (`NAME.keyjar-part`, …).
    @Test func aServersFileNameIsCleanedAndNeverOneOfKeyjarsOwn() async throws {
        let keyjar = KeyjarCLI(daemon: try await DaemonProcess())
        let server = try await HostileServer()
        let directory = try TemporaryDirectory()
        let cases = [
            ("report\u{202E}fdp.exe\u{1B}[31m\u{9B}.txt", "reportfdp.exe[31m.txt"),
            ("report.pdf.keyjar-part", "report.pdf_keyjar-part"),
            ("x.KEYJAR-resume", "x_KEYJAR-resume"),
        ]
        for (suggested, saved) in cases {
            let name = suggested.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? suggested
            let result = try await keyjar.run([
                "fetch", "-O", "--output-dir", directory.path, server.url("/named?name=\(name)"),
            ])
            #expect(result.status == 0, "\(result.error)")
            #expect(!Self.hasControls(result.error), "\(result.error.debugDescription)")
            let listed = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            #expect(
                FileManager.default.contents(atPath: directory.path(saved)) == Data("named".utf8),
                "\(suggested.debugDescription): \(listed)"
            )
        }
    }
}
