import Foundation
import KeyjarTestSupport
import Testing

/// The documentation's shell examples marked `<!-- example: runs -->` run as typed, against the
/// installed commands and a loopback server for the example hosts (scripts/run-doc-examples).
///
/// The examples' hosts resolve to loopback inside a private network and mount namespace, which
/// an unprivileged user enters through a user namespace. Where the machine allows none (some
/// containers, `kernel.unprivileged_userns_clone=0`), these tests are skipped and say why;
/// CI's `examples` step runs the script itself and fails there instead.
@Suite(
    .timeLimit(hangLimit),
    .enabled("needs a user namespace with its own network (unshare --user --net --mount)") {
        await ExamplesNamespace.canBeEntered()
    }
)
struct DocumentationExamplesTests {
    private static let runner = GeneratedFilesTests.root.appendingPathComponent("scripts/run-doc-examples").path
    private static let binaries = (KeyjarCLI.binary as NSString).deletingLastPathComponent

    @Test func everyMarkedExampleRuns() async throws {
        let result = try await runCommand(Self.runner, ["--bin", Self.binaries], within: scriptDeadline)
        #expect(result.status == 0, "\(result.output)\(result.error)")
        // README's getting-started block is among them.
        #expect(result.output.contains("example README.md:"), "\(result.output)")
        #expect(!result.output.contains("run-doc-examples: 0 of"))
    }

    @Test func anExampleThatFailsFailsTheRun() async throws {
        let directory = try TemporaryDirectory()
        let page = directory.path("page.md")
        try """
        <!-- example: runs -->
        ```sh
        keyjar fetch -o report.pdf https://intranet.example/report.pdf
        cmp report.pdf /dev/null
        ```
        """.write(toFile: page, atomically: true, encoding: .utf8)
        let result = try await runCommand(Self.runner, ["--bin", Self.binaries, page], within: scriptDeadline)
        #expect(result.status == 1)
        #expect(result.error.contains("page.md:3 failed"), "\(result.error)")
        #expect(result.output.contains("run-doc-examples: 0 of 1 examples ran"), "\(result.output)")
    }
}

/// The namespace scripts/run-doc-examples runs the examples in.
enum ExamplesNamespace {
    /// Whether it can be entered here.
    static func canBeEntered() async -> Bool {
        let probe = try? await runCommand(
            "/usr/bin/unshare",
            ["--user", "--map-root-user", "--net", "--mount", "--", "/bin/true"]
        )
        return probe?.status == 0
    }
}
