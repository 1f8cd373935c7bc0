// keyjar-bench: Keyjar's performance targets, measured in a release build.
//
// Prints one `name: value unit` line per metric so runs can be compared with diff.
// Run: swift build -c release && .build/release/keyjar-bench [engine] [coding] [store] [service] [import] [client] [loader] [cache] [download] [urlsession] [cli] [python]
//      .build/release/keyjar-bench stress   (robustness under kills; not part of the default run)
//      .build/release/keyjar-bench backup   (backup, wipe, restore of 100,000 cookies; not part of the default run)
import Foundation

// The client benchmark's other processes run this same binary.
if CommandLine.arguments.count == 4, CommandLine.arguments[1] == "client-peer",
    let events = Int(CommandLine.arguments[3])
{
    runNotifyPeer(socketPath: CommandLine.arguments[2], events: events)
}

if CommandLine.arguments.count == 5, CommandLine.arguments[1] == "client-lookup-peer" {
    runLookupPeer(
        socketPath: CommandLine.arguments[2],
        url: CommandLine.arguments[3],
        listening: CommandLine.arguments[4] == "listen"
    )
}

// The stress harness's clients are this binary too.
if CommandLine.arguments.count == 6, CommandLine.arguments[1] == "stress-client",
    let id = Int(CommandLine.arguments[3]),
    let seconds = Double(CommandLine.arguments[4]), let seed = UInt64(CommandLine.arguments[5])
{
    runStressClient(socketPath: CommandLine.arguments[2], id: id, seconds: seconds, seed: seed)
}
if CommandLine.arguments.dropFirst().first == "backup" {
    do {
        try runBackupBenchmark()
        exit(0)
    } catch {
        try? FileHandle.standardError.write(contentsOf: Data("keyjar-bench backup: \(error)\n".utf8))
        exit(1)
    }
}
if CommandLine.arguments.dropFirst().first == "stress" {
    do {
        try runStressBenchmark()
        exit(0)
    } catch {
        try? FileHandle.standardError.write(contentsOf: Data("keyjar-bench stress: \(error)\n".utf8))
        exit(1)
    }
}

let sections = Set(CommandLine.arguments.dropFirst())
let unknown = sections.subtracting([
    "engine", "coding", "store", "service", "import", "browser", "client", "loader", "cache", "download", "urlsession",
    "cli", "python", "sync",
])
guard unknown.isEmpty else {
    FileHandle.standardError.write(
        Data(
            "usage: keyjar-bench [engine] [coding] [store] [service] [import] [browser] [client] [loader] [cache] [download] [urlsession] [cli] [python] [sync]\n"
                .utf8
        )
    )
    exit(2)
}
if sections.isEmpty || sections.contains("engine") { runEngineBenchmark() }
if sections.isEmpty || sections.contains("coding") { runCodingBenchmark() }
if !sections.isDisjoint(with: [
    "store", "service", "import", "browser", "client", "loader", "cache", "download", "urlsession", "cli", "python",
    "sync",
])
    || sections.isEmpty
{
    do {
        if sections.isEmpty || sections.contains("store") {
            try runStoreBenchmark()
            try runImportBreakdown()
        }
        if sections.isEmpty || sections.contains("service") { try runServiceBenchmark() }
        if sections.isEmpty || sections.contains("import") { try runImportBenchmark() }
        if sections.isEmpty || sections.contains("browser") { try runBrowserImportBenchmark() }
        if sections.isEmpty || sections.contains("client") { try runClientBenchmark() }
        if sections.isEmpty || sections.contains("loader") { try runLoaderBenchmark() }
        if sections.isEmpty || sections.contains("cache") { try runCacheBenchmark() }
        if sections.isEmpty || sections.contains("download") { try runDownloadBenchmark() }
        if sections.isEmpty || sections.contains("urlsession") { try runURLSessionBenchmark() }
        if sections.isEmpty || sections.contains("cli") { try runCommandBenchmark() }
        if sections.isEmpty || sections.contains("python") { try runPythonBenchmark() }
        if sections.isEmpty || sections.contains("sync") { try runSyncBenchmark() }
    } catch {
        try? FileHandle.standardError.write(contentsOf: Data("keyjar-bench: \(error)\n".utf8))
        exit(1)
    }
}
