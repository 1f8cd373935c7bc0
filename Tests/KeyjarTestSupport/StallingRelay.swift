public import Foundation
import Glibc

/// A relay on 127.0.0.1 (Python, a process of its own) in front of an HTTP server that passes a
/// request without a `Range` header on only until `stallAfter` bytes of the response went
/// through, then holds the connection open, sending nothing more; a request with `Range` passes
/// whole.
///
/// A download killed "midway" is then killed midway however busy the machine is: a rate limit
/// alone leaves a test that is starved for long enough watching the download finish instead.
public final class StallingRelay: Sendable {
    public let port: Int
    private let pid: Int32

    /// - Parameters:
    ///   - upstreamPort: The HTTP server's port on 127.0.0.1.
    ///   - stallAfter: How many bytes of a response (headers included) pass before it stalls.
    public init(upstreamPort: Int, stallAfter: Int) async throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", Self.script, String(upstreamPort), String(stallAfter)]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        pid = process.processIdentifier
        guard let line = await DaemonProcess.readLine(from: output.fileHandleForReading), let port = Int(line) else {
            kill(process.processIdentifier, SIGKILL)
            throw TestSupportError("the stalling relay did not start")
        }
        self.port = port
    }

    deinit {
        // SIGKILL: nothing of it needs a clean end.
        kill(pid, SIGKILL)
    }

    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    static let script = """
        import socket, sys, threading
        upstream_port, stall_after = int(sys.argv[1]), int(sys.argv[2])

        def read_head(connection):
            data = b""
            while b"\\r\\n\\r\\n" not in data:
                chunk = connection.recv(65536)
                if not chunk:
                    return None
                data += chunk
            return data

        def relay(client):
            try:
                head = read_head(client)
                if head is None:
                    return
                ranged = b"\\nrange:" in head.lower()
                server = socket.create_connection(("127.0.0.1", upstream_port))
                server.sendall(head)
                sent = 0
                while True:
                    chunk = server.recv(65536)
                    if not chunk:
                        break
                    if not ranged and sent + len(chunk) > stall_after:
                        client.sendall(chunk[: max(0, stall_after - sent)])
                        # Stalled: nothing more until the client goes away.
                        while client.recv(65536):
                            pass
                        break
                    client.sendall(chunk)
                    sent += len(chunk)
                server.close()
            except OSError:
                pass
            finally:
                client.close()

        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(16)
        print(listener.getsockname()[1], flush=True)
        while True:
            connection, _ = listener.accept()
            threading.Thread(target=relay, args=(connection,), daemon=True).start()
        """
}
