import Foundation
import Glibc
import KeyjarTestSupport

/// A Python HTTP server on a free loopback port, for the tests that run curl and git.
final class LocalHTTPServer {
    let port: Int
    private let process = ChildProcess()

    /// `script` must print the port it listens on as its first line.
    init(script: String, arguments: [String] = []) async throws {
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script] + arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        guard let line = await DaemonProcess.readLine(from: output.fileHandleForReading), let port = Int(line)
        else {
            kill(process.processIdentifier, SIGKILL)
            throw TestSupportError("the test HTTP server did not start")
        }
        self.port = port
    }

    var base: String { "http://127.0.0.1:\(port)" }

    deinit {
        // SIGKILL: nothing of it needs a clean end.
        kill(process.processIdentifier, SIGKILL)
    }
}
