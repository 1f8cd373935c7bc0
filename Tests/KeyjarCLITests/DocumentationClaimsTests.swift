import Foundation
import KeyjarTestSupport
import Testing

/// README, CONTRIBUTING, SECURITY and docs/ name only what the code has (scripts/check-docs,
/// against the parsers' help and Package.swift), and each false statement they once made fails
/// the check when put back.
@Suite struct DocumentationClaimsTests {
    private static let checker = GeneratedFilesTests.root.appendingPathComponent("scripts/check-docs").path

    private static func check(_ files: [String]) async throws -> (status: Int32, output: String, error: String) {
        try await runCommand(
            checker,
            ["--keyjar", KeyjarCLI.binary, "--keyjard", DaemonProcess.binary] + files
        )
    }

    @Test func theDocumentsNameOnlyWhatTheCodeHas() async throws {
        let result = try await Self.check([])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("documents name only what the code has"))
    }

    @Test(arguments: [
        ("Only `Keyjar`, `KeyjarLoader` and `KeyjarCore` are products.", "as the only products"),
        ("Seventeen Swift modules make up the package.", "Swift modules; Sources/ has"),
        ("Every command takes `--socket`, `--no-start` and `--timeout`.", "not every command takes --socket"),
        (
            "`--method` takes `default`, `basic`, `digest`, `ntlm`, `negotiate`, `html-form`,\n"
                + "`client-certificate` or `server-trust`.", "of --method's values"
        ),
        (
            "Install `pkg-config libsqlite3-dev libsecret-1-dev libcurl4-openssl-dev libssl-dev libpsl-dev\n"
                + "publicsuffix dbus gnome-keyring`.", "a list of Debian packages that lacks"
        ),
        ("The fallback socket is `/tmp/keyjar/keyjar.sock`.", "the fallback socket is /tmp/keyjar-UID"),
        ("Run `keyjar cookie list --frobnicate`.", "`keyjar cookie list` has no --frobnicate"),
        // Spelled in two pieces: the check reads this file too, for the variables tests set.
        ("Set `" + "KEYJAR_" + "NO_SUCH_VARIABLE=1`.", "NO_SUCH_VARIABLE is read nowhere"),
        ("Import `KeyjarNoSuchModule`.", "`KeyjarNoSuchModule` is not a module"),
        ("Add `.product(name: \"KeyjarStore\", package: \"keyjar\")`.", "is not a library product"),
        ("Pass `--no-such-option`.", "--no-such-option is not an option"),
        ("Read [the guide](docs/no-such-page.md#start).", "links to docs/no-such-page.md#start, which does not exist"),
    ])
    func aFalseStatementPutBackFailsTheCheck(statement: String, complaint: String) async throws {
        let directory = try TemporaryDirectory()
        let file = directory.path("page.md")
        try (statement + "\n").write(toFile: file, atomically: true, encoding: .utf8)
        let result = try await Self.check([file])
        #expect(result.status == 1)
        #expect(result.error.contains(complaint), "\(result.error)")
    }
}
