import Foundation

/// `keyjar-bench python`: Keyjar's Python client (python/) beside what a Python program uses
/// otherwise, measured in one run by scripts/python-client-bench.py against a keyjard on a
/// private Secret Service: `keyring.get_password` against secretstorage's lookup of the same
/// item, and the Cookie header of `KeyjarCookieJar` against `http.cookiejar`'s for 1,000
/// cookies. Each ratio's target is 2 (docs/performance.md, "The Python client").
func runPythonBenchmark() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    // The python3 of the caller's PATH, by its real path: the benchmark's environment has a
    // private HOME, where a version manager's shim would not find its interpreter.
    let python = try pythonExecutable()
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "keyjar-bench-python-\(getpid())"
    ).path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let secrets = try BenchSecretService(directory: directory + "/secrets")
    defer { withExtendedLifetime(secrets) {} }
    let daemon = try BenchDaemon(directory: directory, secretService: secrets.environment)
    defer { daemon.stop() }

    var environment = secrets.environment
    environment["KEYJAR_SOCKET"] = daemon.socketPath
    environment["KEYJAR_NO_AUTOSTART"] = "1"
    environment["PYTHONPATH"] = root + "/python"
    environment["PYTHONDONTWRITEBYTECODE"] = "1"
    if let rounds = ProcessInfo.processInfo.environment["KEYJAR_BENCH_PYTHON_ROUNDS"] {
        environment["KEYJAR_BENCH_PYTHON_ROUNDS"] = rounds
    }
    print(try runScript("scripts/python-client-bench.py", python: python, environment: environment), terminator: "")
}

/// Runs one of the repository's Python scripts (`scripts/NAME.py`) with `environment`: what it
/// printed, or an error with its status and output.
func runScript(_ script: String, python: String, environment: [String: String]) throws -> String {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    let process = Process()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = [root + "/" + script]
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: (try output.fileHandleForReading.readToEnd()) ?? Data(), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchmarkError("\(script) failed (status \(process.terminationStatus)): \(text)")
    }
    return text
}

func pythonExecutable() throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = ["python3", "-c", "import sys; print(sys.executable)"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let text = String(decoding: (try output.fileHandleForReading.readToEnd()) ?? Data(), as: UTF8.self)
    process.waitUntilExit()
    let path = text.trimmingCharacters(in: .whitespacesAndNewlines)
    guard process.terminationStatus == 0, !path.isEmpty else { throw BenchmarkError("no python3 on PATH") }
    return path
}
