// keyjar-bench: Keyjar's performance targets, measured in a release build.
//
// Prints one `name: value unit` line per metric so runs can be compared with diff.
// Run: swift build -c release && .build/release/keyjar-bench [engine] [store] [service]
import Foundation

let sections = Set(CommandLine.arguments.dropFirst())
let unknown = sections.subtracting(["engine", "store", "service"])
guard unknown.isEmpty else {
    FileHandle.standardError.write(Data("usage: keyjar-bench [engine] [store] [service]\n".utf8))
    exit(2)
}
if sections.isEmpty || sections.contains("engine") { runEngineBenchmark() }
if sections.isEmpty || sections.contains("store") || sections.contains("service") {
    do {
        if sections.isEmpty || sections.contains("store") {
            try runStoreBenchmark()
            try runImportBreakdown()
        }
        if sections.isEmpty || sections.contains("service") { try runServiceBenchmark() }
    } catch {
        FileHandle.standardError.write(Data("keyjar-bench: \(error)\n".utf8))
        exit(1)
    }
}
