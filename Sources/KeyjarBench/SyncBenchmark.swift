import Foundation

/// `keyjar-bench sync`: an idle `keyjar sync` with 50 credentials in a pass store, against the
/// same sync decrypting each entry (as it did before sync.json recorded when each item had last
/// changed), alternated by scripts/sync-bench.py against a keyjard of its own and a GnuPG home
/// of its own (docs/performance.md, "keyjar sync").
func runSyncBenchmark() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    let python = try pythonExecutable()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "keyjar-bench-sync-\(getpid())"
    ).path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let daemon = try BenchDaemon(directory: directory)
    defer { daemon.stop() }

    var environment = ProcessInfo.processInfo.environment
    environment["KEYJAR_SOCKET"] = daemon.socketPath
    environment["KEYJAR_NO_AUTOSTART"] = "1"
    environment["HOME"] = directory + "/home"
    environment["XDG_STATE_HOME"] = directory + "/state"
    environment["GNUPGHOME"] = directory + "/gnupg"
    environment["PASSWORD_STORE_DIR"] = directory + "/store"
    environment["KEYJAR_BENCH_BIN"] = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [root + "/scripts/sync-bench.py"]
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: (try output.fileHandleForReading.readToEnd()) ?? Data(), as: UTF8.self)
    process.waitUntilExit()
    // The gpg-agent the syncs started, which would outlive the GnuPG home.
    let agent = Process()
    agent.executableURL = URL(fileURLWithPath: "/usr/bin/gpgconf")
    agent.arguments = ["--kill", "gpg-agent"]
    agent.environment = environment
    try? agent.run()
    agent.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchmarkError("scripts/sync-bench.py failed (status \(process.terminationStatus)): \(text)")
    }
    print(text, terminator: "")
}
