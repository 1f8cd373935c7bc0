import Foundation
import KeyjarTestSupport
import Testing

/// The committed shell completions and man page come from the parser (scripts/generate-cli-docs).
@Suite struct GeneratedFilesTests {
    /// The repository root, from this file's path.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScriptsAreCurrent(shell: String) async throws {
        let generated = try await runCommand(KeyjarCLI.binary, ["--generate-completion-script", shell])
        #expect(generated.status == 0)
        let committed = try String(
            contentsOf: Self.root.appendingPathComponent("completions/keyjar.\(shell)"),
            encoding: .utf8
        )
        #expect(generated.output == committed, "completions/keyjar.\(shell) is stale: run scripts/generate-cli-docs")
    }

    @Test func theManPageCoversEveryCommand() async throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/keyjar.1"), encoding: .utf8)
        let help = try await runCommand(KeyjarCLI.binary, ["--experimental-dump-help"])
        let dump = try #require(try JSONSerialization.jsonObject(with: Data(help.output.utf8)) as? [String: Any])
        // Every command and option name the parser shows appears in the page (a hidden one,
        // such as what `keyjar` passes keyjar-full, is no user's).
        func names(_ command: [String: Any]) -> [String] {
            let own = (command["arguments"] as? [[String: Any]] ?? []).compactMap { argument -> String? in
                guard argument["shouldDisplay"] as? Bool != false else { return nil }
                return (argument["names"] as? [[String: Any]])?.first?["name"] as? String
            }
            let subcommands = command["subcommands"] as? [[String: Any]] ?? []
            return [command["commandName"] as? String ?? ""] + own + subcommands.flatMap(names)
        }
        let all = Set(names(try #require(dump["command"] as? [String: Any])).filter { !$0.isEmpty && $0 != "help" })
        #expect(all.count > 40)
        for name in all {
            #expect(page.contains(name), "docs/keyjar.1 does not mention \(name): run scripts/generate-cli-docs")
        }
    }

    /// Each man page is what scripts/render-man-page makes of its program's parser, as
    /// scripts/generate-cli-docs wrote it: a changed help text or option fails here until the
    /// page is regenerated.
    @Test(arguments: [("keyjar", KeyjarCLI.binary), ("keyjard", DaemonProcess.binary)])
    func manPagesAreCurrent(page: String, binary: String) async throws {
        let committed = try String(contentsOf: Self.root.appendingPathComponent("docs/\(page).1"), encoding: .utf8)
        let date = try #require(
            committed.split(separator: "\n").first { $0.hasPrefix(".Dd ") }.flatMap { line in
                Self.pageDate.date(from: String(line.dropFirst(4)))
            }
        )
        let dump = try await runCommand(binary, ["--experimental-dump-help"])
        #expect(dump.status == 0)
        let rendered = try await runCommand(
            Self.root.appendingPathComponent("scripts/render-man-page").path,
            [
                "--date", Self.isoDate.string(from: date),
                Self.root.appendingPathComponent("docs/\(page).1.sections").path,
            ],
            input: dump.output
        )
        #expect(rendered.status == 0, "\(rendered.error)")
        #expect(rendered.output == committed, "docs/\(page).1 is stale: run scripts/generate-cli-docs")
    }

    /// What generate-manual's pages got wrong: every "…" dropped, examples run into one line,
    /// the global options repeated under each command.
    @Test func theManPageKeepsEllipsesExamplesAndGlobalOptionsOnce() throws {
        let page = try String(contentsOf: Self.root.appendingPathComponent("docs/keyjar.1"), encoding: .utf8)
        #expect(page.contains("a Secure cookie over http, \\[u2026])"))
        #expect(page.contains(".Bd -literal -offset indent\nkeyjar status\n"))
        for option in ["socket", "no-start", "timeout"] {
            #expect(
                page.components(separatedBy: ".It Fl -\(option) ").count
                    + page.components(separatedBy: ".It Fl -\(option)\n").count == 3,
                "\(option)"
            )
        }
        #expect(page.contains("except keyjar cache list, keyjar cache clear"))
    }

    private static let pageDate: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "MMMM d, yyyy"
        return formatter
    }()

    private static let isoDate: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter
    }()
}
