// keyjar-bench: Keyjar's performance targets, measured in a release build.
//
// Prints one `name: value unit` line per metric so runs can be compared with diff.
// Run: swift build -c release && .build/release/keyjar-bench [engine|service]
import Foundation

let sections = Set(CommandLine.arguments.dropFirst())
let unknown = sections.subtracting(["engine", "service"])
guard unknown.isEmpty else {
    FileHandle.standardError.write(Data("usage: keyjar-bench [engine] [service]\n".utf8))
    exit(2)
}
if sections.isEmpty || sections.contains("engine") { runEngineBenchmark() }
if sections.isEmpty || sections.contains("service") {
    do {
        try runServiceBenchmark()
    } catch {
        FileHandle.standardError.write(Data("keyjar-bench: \(error)\n".utf8))
        exit(1)
    }
}
