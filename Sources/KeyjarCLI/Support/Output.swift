import Foundation
import Glibc

/// Standard output carries results only; everything else goes to standard error.
enum Output {
    static func line(_ text: String) {
        print(text)
    }

    /// Writes text as is and flushes, for output that must reach a pipe at once (watch).
    static func flushedLine(_ text: String) {
        print(text)
        // fflush(nil) flushes every stream; naming `stdout` is a global-state error in Swift 6.
        fflush(nil)
    }

    static func error(_ text: String) {
        FileHandle.standardError.write(Data(("keyjar: " + text + "\n").utf8))
    }

    static var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// JSON for `--json` output: sorted keys so scripts and diffs see a stable shape.
    static func json(_ value: some Encodable) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw CLIError.failure("could not encode the result as JSON: \(error)")
        }
    }

    /// Unix seconds as an ISO 8601 UTC time.
    static func time(_ date: Date) -> String { date.ISO8601Format() }
}
