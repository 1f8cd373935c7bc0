import Foundation

/// `keyjar-bench sync`: an idle `keyjar sync` with 50 credentials in a pass store, against the
/// same sync decrypting each entry (as it did before sync.json recorded when each item had last
/// changed), alternated by scripts/sync-bench.py against a keyjard of its own and a GnuPG home
/// of its own (docs/performance.md, "keyjar sync").
func runSyncBenchmark() throws {
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
    // The gpg-agent the syncs started outlives the GnuPG home unless stopped, run or not.
    defer { stopAgent(environment) }
    print(try runScript("scripts/sync-bench.py", python: python, environment: environment), terminator: "")
}

private func stopAgent(_ environment: [String: String]) {
    let agent = Process()
    agent.executableURL = URL(fileURLWithPath: "/usr/bin/gpgconf")
    agent.arguments = ["--kill", "gpg-agent"]
    agent.environment = environment
    guard (try? agent.run()) != nil else { return }
    agent.waitUntilExit()
}
