import Foundation
import Glibc

/// An https server on 127.0.0.1 whose certificate a certificate authority of the test's own
/// issued (as a company's CA, or mkcert's, issues a development server's): trusted only by a
/// client told to trust that CA. `otherCA` is a second CA, which trusts nothing here.
public final class PrivateCAServer: Sendable {
    public let directory: TemporaryDirectory
    public let port: Int
    private let process = ChildProcess()

    /// The CA that issued the server's certificate (PEM).
    public var caFile: String { directory.path("ca.pem") }
    /// The same CA in a hashed directory (`openssl rehash`), as curl's --capath takes it.
    public var caDirectory: String { directory.path("ca-dir") }
    /// Another CA, which did not issue it.
    public var otherCAFile: String { directory.path("other-ca.pem") }
    public var url: String { "https://127.0.0.1:\(port)/" }

    /// Every request gets 200 "trusted page".
    public init() async throws {
        directory = try TemporaryDirectory()
        let dir = directory.path
        let script = """
            set -e
            cd "$0"
            for ca in ca other-ca; do
                openssl req -x509 -newkey rsa:2048 -nodes -keyout $ca.key -out $ca.pem -days 2 \\
                    -subj "/CN=Keyjar test $ca" -addext basicConstraints=critical,CA:TRUE \\
                    -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
            done
            openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1 2>/dev/null
            printf 'subjectAltName=IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\n' > server.ext
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 \\
                -extfile server.ext 2>/dev/null
            mkdir ca-dir && cp ca.pem ca-dir/ && openssl rehash ca-dir
            """
        let made = try await runCommand("/bin/sh", ["-c", script, dir])
        guard made.status == 0 else { throw TestSupportError("making the test CA failed: \(made.error)") }
        let server = """
            import http.server, ssl, sys
            class H(http.server.BaseHTTPRequestHandler):
                protocol_version = "HTTP/1.1"
                def do_GET(self):
                    self.send_response(200); self.send_header("Content-Length", "12"); self.end_headers()
                    self.wfile.write(b"trusted page")
                do_POST = do_GET
                def log_message(self, *args): pass
            http.server.ThreadingHTTPServer.daemon_threads = True
            s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[1] + "/server.pem", sys.argv[1] + "/server.key")
            s.socket = context.wrap_socket(s.socket, server_side=True)
            print(s.server_address[1], flush=True)
            s.serve_forever()
            """
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", server, dir]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        guard let line = await DaemonProcess.readLine(from: output.fileHandleForReading), let port = Int(line) else {
            kill(process.processIdentifier, SIGKILL)
            throw TestSupportError("the private CA's https server did not start")
        }
        self.port = port
    }

    deinit { kill(process.processIdentifier, SIGKILL) }
}
