import Foundation
import KeyjarTestSupport

/// Keyjar's Python package (python/) installed as a user installs it, with pip, into a virtual
/// environment that also sees the system's packages (keyring, requests, httpx, docker,
/// secretstorage: scripts/install-dependencies installs them). Made once per test run.
actor PythonEnvironment {
    static let shared = PythonEnvironment()

    /// The repository's root.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path

    /// Where the tests' Python helpers are.
    static func script(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Python/\(name)").path
    }

    private var made: Task<String, any Error>?
    private let directory: TemporaryDirectory?

    private init() { directory = try? TemporaryDirectory() }

    /// The environment's `python`.
    func python() async throws -> String {
        if let made { return try await made.value }
        guard let directory else { throw TestSupportError("no directory for the Python environment") }
        let task = Task { try await Self.make(in: directory.path("venv")) }
        made = task
        return try await task.value
    }

    private static func make(in path: String) async throws -> String {
        let created = try await runCommand("/usr/bin/env", ["python3", "-m", "venv", "--system-site-packages", path])
        guard created.status == 0 else { throw TestSupportError("python3 -m venv failed: \(created.error)") }
        let python = path + "/bin/python"
        // From a copy of the checkout's package (pip builds in the tree it is given, and a
        // build/ left there by an earlier build would bring its stale files along): no index,
        // and the build backend the system has.
        let source = path + "-source"
        try FileManager.default.copyItem(atPath: root + "/python", toPath: source)
        for leftover in ["build", "keyjar.egg-info"] {
            try? FileManager.default.removeItem(atPath: source + "/" + leftover)
        }
        let installed = try await runCommand(
            python,
            [
                "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-index", "--no-deps",
                "--no-build-isolation", source,
            ]
        )
        guard installed.status == 0 else { throw TestSupportError("pip install ./python failed: \(installed.error)") }
        return python
    }

    /// Runs `python` code (or `-m module …`) against `daemon`, with keyjard's socket, no
    /// autostart, a timeout no busy machine reaches, and no keyring backend forced: keyring
    /// picks Keyjar's by its entry point.
    func run(
        _ arguments: [String],
        daemon: DaemonProcess,
        input: String? = nil,
        environment extra: [String: String] = [:],
        removing: [String] = []
    ) async throws -> (status: Int32, output: String, error: String) {
        var environment = ProcessInfo.processInfo.environment
        environment["KEYJAR_SOCKET"] = daemon.socketPath
        environment["KEYJAR_NO_AUTOSTART"] = "1"
        environment["PYTHONDONTWRITEBYTECODE"] = "1"
        environment["PIP_CONFIG_FILE"] = "/dev/null"
        environment["PYTHON_KEYRING_BACKEND"] = nil
        // The client's wait for an answer is a guard against a hang here, never a measure of
        // speed: keyjard can be queued behind other tests for longer than the default 30 s.
        environment["KEYJAR_TIMEOUT"] = "600"
        for name in removing { environment[name] = nil }
        environment.merge(extra) { _, new in new }
        return try await runCommand(try await python(), arguments, environment: environment, input: input)
    }
}
