import Foundation
import KeyjarTestSupport
import Testing

enum Python {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `script` with python3, `input` on its standard input; returns standard output. The
    /// cross-checks use Python's hashlib, an implementation independent of Keyjar's.
    static func run(_ script: String, input: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script]
        let stdin = Pipe()
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // Write on another thread: a large input could fill the pipe while python is
        // blocked writing its own output.
        let data = Data(input.utf8)
        let writer = Thread {
            stdin.fileHandleForWriting.write(data)
            try? stdin.fileHandleForWriting.close()
        }
        writer.start()
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw Failure(description: "python3 failed: " + String(decoding: errors, as: UTF8.self))
        }
        return String(decoding: output, as: UTF8.self)
    }
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// What `dump` prints, which walks stored properties unless the type supplies a mirror.
func dumped(_ value: some Any) -> String {
    var text = ""
    dump(value, to: &text)
    return text
}
