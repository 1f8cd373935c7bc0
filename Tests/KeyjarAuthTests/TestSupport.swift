import Foundation
import KeyjarTestSupport
import Testing

enum Python {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `script` with python3, `input` on its standard input; returns standard output. The
    /// cross-checks use Python's hashlib, an implementation independent of Keyjar's.
    static func run(_ script: String, input: String) async throws -> String {
        let result = try await runCommand("/usr/bin/env", ["python3", "-c", script], input: input)
        guard result.status == 0 else { throw Failure(description: "python3 failed: " + result.error) }
        return result.output
    }
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// What `dump` prints, which walks stored properties unless the type supplies a mirror.
func dumped(_ value: some Any) -> String {
    var text = ""
    dump(value, to: &text)
    return text
}
