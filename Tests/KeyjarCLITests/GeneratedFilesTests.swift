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
        // Every command and option name the parser knows appears in the page.
        func names(_ command: [String: Any]) -> [String] {
            let own = (command["arguments"] as? [[String: Any]] ?? []).compactMap { argument in
                (argument["names"] as? [[String: Any]])?.first?["name"] as? String
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
}
