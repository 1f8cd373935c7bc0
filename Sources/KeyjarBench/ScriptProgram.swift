import Foundation
import Glibc

/// A C program from `scripts/` (a floor or a peer), compiled for this run: the figures it is
/// compared with are measured in the same run, on the same machine state. Removed with it.
final class ScriptProgram {
    let source: String
    let binary: String

    /// - Parameters:
    ///   - name: the file under `scripts/`, e.g. `acked-write-floor.c`.
    ///   - linking: what follows the source on `cc`'s command line (libraries; a shell
    ///     fragment, so `$(pkg-config --cflags --libs …)` works); written here, never read in.
    ///   - needs: the Debian package to name when it does not compile.
    init(_ name: String, linking: String = "", needs package: String? = nil) throws {
        source =
            URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/\(name)").path
        binary = NSTemporaryDirectory() + "keyjar-bench-\((name as NSString).deletingPathExtension)-\(getpid())"
        let compiler = Process()
        compiler.executableURL = URL(fileURLWithPath: "/bin/sh")
        compiler.arguments = ["-c", "exec cc -O2 \"$0\" \(linking) -o \"$1\"", source, binary]
        try compiler.run()
        compiler.waitUntilExit()
        guard compiler.terminationStatus == 0 else {
            throw BenchmarkError("cannot compile \(source)" + (package.map { " (needs \($0))" } ?? ""))
        }
    }

    deinit { unlink(binary) }

    /// Runs it to its end; its standard output. A failure (or no output) throws, with the output.
    func run(_ arguments: [String] = [], environment: [String: String]? = nil) throws -> String {
        let process = Process()
        let output = Pipe()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardOutput = output
        try process.run()
        let text = String(decoding: (try output.fileHandleForReading.readToEnd()) ?? Data(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0, !text.isEmpty else {
            throw BenchmarkError("\(source) failed (status \(process.terminationStatus)): \(text)")
        }
        return text
    }

    /// The decimal number right after `marker` in a program's output ("median " → 41.5).
    static func number(after marker: String, in text: String) -> Double? {
        guard let range = text.range(of: marker) else { return nil }
        return Double(text[range.upperBound...].prefix { $0.isNumber || $0 == "." })
    }
}
