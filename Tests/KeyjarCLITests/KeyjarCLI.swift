import Foundation
import KeyjarTestSupport
import Testing

/// The built `keyjar` binary, run against one test's keyjard (never auto-starting another).
struct KeyjarCLI {
    static var binary: String { DaemonProcess.builtExecutable(named: "keyjar") }

    let daemon: DaemonProcess

    /// The test's environment with keyjard's socket and database, and auto-start off so that a
    /// mistake cannot start a keyjard behind the test's back. The database too: a client that
    /// finds no keyjard on its socket follows its database's pointer, and the suite's default
    /// database is not this test's.
    var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["KEYJAR_SOCKET"] = daemon.socketPath
        environment["KEYJAR_DATABASE"] = daemon.databasePath
        environment["KEYJAR_NO_AUTOSTART"] = "1"
        // How long a command waits for keyjard: a guard against a hang, never a limit a busy
        // machine can reach (git's helper would give up after 5 s, another command after 30).
        // A test of a timeout sets its own.
        environment["KEYJAR_TIMEOUT"] = "600"
        return environment
    }

    /// A database no keyjard serves, in `directory`, for a command that must find no keyjard:
    /// a client that finds none on its socket follows its database's pointer to the keyjard
    /// serving that database (`DatabasePointer`), and the default database may be served at
    /// that moment by a keyjard another test started.
    static func unservedDatabase(in directory: TemporaryDirectory) -> [String: String] {
        ["KEYJAR_DATABASE": directory.path("unserved.sqlite3")]
    }

    struct Result {
        var status: Int32
        var output: String
        var error: String

        var lines: [String] { output.split(separator: "\n").map(String.init) }
    }

    @discardableResult
    func callAsFunction(_ arguments: String..., input: String? = nil) async throws -> Result {
        try await run(arguments, input: input)
    }

    func run(
        _ arguments: [String],
        input: String? = nil,
        environment extra: [String: String] = [:]
    ) async throws -> Result {
        guard FileManager.default.isExecutableFile(atPath: Self.binary) else {
            throw TestSupportError("keyjar is not built at \(Self.binary)")
        }
        let result = try await runCommand(
            Self.binary,
            arguments,
            environment: environment.merging(extra) { _, new in new },
            input: input ?? ""
        )
        return Result(status: result.status, output: result.output, error: result.error)
    }

    /// Runs and expects success, returning standard output.
    @discardableResult
    func ok(
        _ arguments: String...,
        input: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String {
        try await ok(arguments, input: input, sourceLocation: sourceLocation)
    }

    @discardableResult
    func ok(
        _ arguments: [String],
        input: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> String {
        let result = try await run(arguments, input: input)
        #expect(
            result.status == 0,
            "keyjar \(arguments.joined(separator: " ")) failed: \(result.error)",
            sourceLocation: sourceLocation
        )
        return result.output
    }

    /// Decodes JSON output.
    func json(_ arguments: String...) async throws -> Any {
        let result = try await run(arguments)
        guard result.status == 0 else { throw TestSupportError("keyjar \(arguments) failed: \(result.error)") }
        return try JSONSerialization.jsonObject(with: Data(result.output.utf8))
    }
}

/// A unique host per test, so tests sharing a Secret Service never see each other's entries.
func uniqueHost(_ prefix: String) -> String { "\(prefix)-\(UUID().uuidString.prefix(8).lowercased()).example" }
