import Foundation
import Testing

/// A `sqlite3` shell in a process of its own, holding a database open: what a running browser
/// is to the reader. Its output is collected as it comes, so a test can wait for a marker.
public final class SQLiteShell: Sendable {
    private let process = ChildProcess()
    private let input = Pipe()
    private let output = OutputCollector()

    public init(database: String) throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        // A browser waits for a reader's lock rather than failing its write: so does the shell
        // (`-cmd .timeout`), or a snapshot taken at the wrong moment would fail its write.
        process.arguments = ["-batch", "-cmd", ".timeout \(Int(hangSeconds * 1000))", database]
        process.standardInput = input
        process.standardOutput = output.pipe
        process.standardError = output.pipe
        try process.run()
        output.start()
    }

    /// Runs `sql`, then waits until the shell printed a marker after it: the statements are
    /// done (committed) when this returns.
    public func run(_ sql: String) async throws {
        let marker = "done-\(UUID().uuidString)"
        DescriptorIO.write(sql + "\n.print \(marker)\n", to: input.fileHandleForWriting)
        try await waitUntil("sqlite3 running \(sql.prefix(40))") { output.text.contains(marker) }
        let text = output.text
        // "Error: …", "Runtime error near line 1: …": a statement failed.
        #expect(!text.lowercased().contains("error"), "sqlite3 said: \(text)")
    }

    /// Ends the shell (closing the database) and waits for it.
    public func close() async throws {
        try input.fileHandleForWriting.close()
        try await waitForExit(process)
        _ = try await output.waitForEnd()
    }
}
