import Foundation
import Glibc
import KeyjarPlatform

/// A cookies.txt of 100,000 and of 600,000 lines (3,000 and 18,000 sites) imported with the
/// release `keyjar cookie import` into a keyjard with its default limits: lines per second, and
/// the resident memory of both processes (keyjard's high-water mark, during and after; the
/// importer's peak, from wait4); then a 250,000-line file with a watcher
/// (``runWatchedImport(keyjar:directory:)``).
func runImportBenchmark() throws {
    let directory = NSTemporaryDirectory() + "keyjar-bench-import-\(getpid())"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let keyjar = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "keyjar"
    ).path
    guard FileManager.default.isExecutableFile(atPath: keyjar) else {
        throw BenchmarkError("no keyjar beside keyjar-bench: run `swift build -c release` first")
    }
    // KEYJAR_BENCH_IMPORT_ONLY=watched: only the import with a watcher.
    let onlyWatched = ProcessInfo.processInfo.environment["KEYJAR_BENCH_IMPORT_ONLY"] == "watched"
    for lines in onlyWatched ? [] : [100_000, 600_000] {
        let file = directory + "/cookies-\(lines).txt"
        try writeCookiesFile(file, lines: lines)
        let store = directory + "/store-\(lines)"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        let daemon = try BenchDaemon(directory: store, defaultLimits: true)
        defer { daemon.stop() }
        let start = nanoseconds()
        let (status, peak) = try runMeasured(
            keyjar,
            ["cookie", "import", "--no-start", "--socket", daemon.socketPath, file]
        )
        let elapsed = nanoseconds() - start
        guard status == 0 else { throw BenchmarkError("keyjar cookie import exited with \(status)") }
        let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0
        print("import_default_limits_\(lines)_lines_file: \(size / 1_048_576) MiB")
        print(
            "import_default_limits_\(lines)_lines_per_second: \(UInt64(lines) * 1_000_000_000 / max(elapsed, 1)) lines/s"
        )
        print("import_default_limits_\(lines)_keyjar_peak_rss: \(peak / 1024) KiB")
        print("import_default_limits_\(lines)_keyjard_peak_rss: \(daemon.peakResidentBytes / 1024) KiB")
        print("import_default_limits_\(lines)_keyjard_rss_after: \(daemon.residentBytes / 1024) KiB")
    }
    try runWatchedImport(keyjar: keyjar, directory: directory)
}

/// A 250,000-line cookies.txt (6,250 sites) imported while `keyjar watch --json` runs: the bytes
/// the watcher printed (the file's net change, never a cookie added and evicted again), and the
/// peak memory of keyjard and the importer.
private func runWatchedImport(keyjar: String, directory: String) throws {
    let lines = 250_000
    let file = directory + "/cookies-watched.txt"
    try writeCookiesFile(file, lines: lines)
    let store = directory + "/store-watched"
    try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
    let daemon = try BenchDaemon(directory: store, defaultLimits: true)
    defer { daemon.stop() }
    let watched = directory + "/watch.out"
    let watcher = try spawn(keyjar, ["watch", "--json", "--no-start", "--socket", daemon.socketPath], output: watched)
    defer {
        kill(watcher, SIGTERM)
        var status: Int32 = 0
        waitpid(watcher, &status, 0)
    }
    // A moment for it to subscribe (it prints nothing until the first event).
    usleep(500_000)
    let (status, peak) = try runMeasured(
        keyjar,
        ["cookie", "import", "--no-start", "--socket", daemon.socketPath, file]
    )
    guard status == 0 else { throw BenchmarkError("keyjar cookie import exited with \(status)") }
    // Until the watcher has printed everything: its output stops growing.
    var size = -1
    while true {
        usleep(500_000)
        let now = (try? FileManager.default.attributesOfItem(atPath: watched)[.size] as? Int) ?? 0
        if now == size { break }
        size = now
    }
    print("import_watched_\(lines)_lines_watcher_bytes: \(size) bytes")
    print("import_watched_\(lines)_lines_keyjar_peak_rss: \(peak / 1024) KiB")
    print("import_watched_\(lines)_lines_keyjard_peak_rss: \(daemon.peakResidentBytes / 1024) KiB")
}

/// Starts a program with its standard output to `output` and its errors to /dev/null.
private func spawn(_ executable: String, _ arguments: [String], output: String) throws -> pid_t {
    try ProcessSpawn.start(
        [executable] + arguments,
        ProcessSpawn.Options(standardOutput: .file(output, flags: O_WRONLY | O_CREAT | O_TRUNC), standardError: .null)
    )
}

/// `lines` cookies, 40 a site, valid for a day; written in pieces, so that this process stays
/// small (a child spawned by posix_spawn starts by sharing its memory, and wait4's peak counts
/// that).
private func writeCookiesFile(_ path: String, lines: Int) throws {
    let expiry = Int(Date().timeIntervalSince1970) + 86_400
    guard FileManager.default.createFile(atPath: path, contents: Data("# Netscape HTTP Cookie File\n".utf8)),
        let handle = FileHandle(forWritingAtPath: path)
    else { throw BenchmarkError("cannot write \(path)") }
    defer { try? handle.close() }
    try handle.seekToEnd()
    for start in stride(from: 0, to: lines, by: 10_000) {
        var text = ""
        for index in start..<min(lines, start + 10_000) {
            text += ".site\(index / 40).example\tTRUE\t/\tFALSE\t\(expiry)\tcookie\(index % 40)\tvalue-\(index)\n"
        }
        try handle.write(contentsOf: Data(text.utf8))
    }
}

/// Runs a program to its end: its exit status (-1 when a signal ended it) and its peak resident
/// memory (bytes).
private func runMeasured(_ executable: String, _ arguments: [String]) throws -> (status: Int32, peakBytes: Int) {
    let pid = try ProcessSpawn.start(
        [executable] + arguments,
        ProcessSpawn.Options(standardOutput: .null, standardError: .null)
    )
    let exit = ProcessSpawn.wait(pid)
    return (exit.wasSignalled ? -1 : exit.status, exit.peakResidentBytes)
}
