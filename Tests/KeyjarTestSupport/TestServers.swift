public import Foundation
import Glibc

/// lighttpd from Debian's packages, serving Digest (its own implementation) on a free port.
public final class LighttpdServer: Sendable {
    public let port: Int
    private let pid: Int32
    public let directory: String

    public let scheme: String

    /// - Parameters:
    ///   - tls: serve HTTPS (HTTP/2 by ALPN) with a self-signed certificate.
    ///   - clientCA: with TLS, require a client certificate issued by this CA (a PEM file).
    public init(tls: Bool = false, clientCA: String? = nil) async throws {
        scheme = tls ? "https" : "http"
        directory = NSTemporaryDirectory() + "keyjar-lighttpd-\(UUID().uuidString.prefix(8))"
        let fileManager = FileManager.default
        for path in ["www/digest", "www/digest-md5", "www/plain"] {
            try fileManager.createDirectory(atPath: "\(directory)/\(path)", withIntermediateDirectories: true)
            try Data("secret page\n".utf8).write(to: URL(fileURLWithPath: "\(directory)/\(path)/index.txt"))
        }

        // The password file holds HA1 = H(user:realm:password) in MD5 and SHA-256, written by
        // Python's hashlib (not by Keyjar).
        let htdigest = try await runPython(
            """
            import hashlib
            for realm in ("keyjar-digest", "keyjar-md5"):
                for h in (hashlib.md5, hashlib.sha256):
                    print("alice:%s:%s" % (realm, h(("alice:%s:wonderland" % realm).encode()).hexdigest()))
            """
        )
        try Data(htdigest.utf8).write(to: URL(fileURLWithPath: "\(directory)/htdigest"))
        var tlsLines = ""
        if tls {
            let made = try await runCommand(
                "/usr/bin/openssl",
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                    "-keyout", "\(directory)/key.pem", "-out", "\(directory)/cert.pem",
                ]
            )
            guard made.status == 0 else { throw TestSupportError("openssl failed: \(made.error)") }
            tlsLines = """
                server.modules += ("mod_openssl")
                ssl.engine = "enable"
                ssl.pemfile = "\(directory)/cert.pem"
                ssl.privkey = "\(directory)/key.pem"
                server.feature-flags += ("server.h2proto" => "enable")
                """
            if let clientCA {
                tlsLines += """

                    ssl.ca-file = "\(clientCA)"
                    ssl.verifyclient.activate = "enable"
                    ssl.verifyclient.enforce = "enable"
                    """
            }
        }
        let directory = self.directory
        (port, pid) = try await spawnOnFreePort(name: "lighttpd", log: "\(directory)/error.log") { candidate in
            let configuration = """
                server.document-root = "\(directory)/www"
                server.port = \(candidate)
                server.bind = "127.0.0.1"
                server.modules = ("mod_auth", "mod_authn_file")
                server.errorlog = "\(directory)/error.log"
                auth.backend = "htdigest"
                auth.backend.htdigest.userfile = "\(directory)/htdigest"
                auth.require = (
                    "/digest/" => ("method" => "digest", "realm" => "keyjar-digest", "require" => "valid-user", "algorithm" => "SHA-256|MD5"),
                    "/digest-md5/" => ("method" => "digest", "realm" => "keyjar-md5", "require" => "valid-user", "algorithm" => "MD5")
                )
                mimetype.assign = (".txt" => "text/plain")
                \(tlsLines)
                """
            try Data(configuration.utf8).write(to: URL(fileURLWithPath: "\(directory)/lighttpd.conf"))
            return ("/usr/sbin/lighttpd", ["-D", "-f", "\(directory)/lighttpd.conf"])
        }
    }

    deinit {
        kill(pid, SIGKILL)
        try? FileManager.default.removeItem(atPath: directory)
    }

    public func url(_ path: String, user: String? = nil) -> URL {
        URL(string: "\(scheme)://\(user.map { "\($0)@" } ?? "")127.0.0.1:\(port)\(path)")!
    }
}

/// Starts a server on a loopback port found free, and returns once it accepts there. A port
/// found free may be taken by another test before the server binds it: then the server exits,
/// and another port is tried. Accepting is not enough (the other test's server accepts there
/// too, and ours may not have exited yet): the listening socket must be our server's.
///
/// - Parameter command: writes the server's configuration for a port and returns its command.
func spawnOnFreePort(
    name: String,
    log: String,
    _ command: (Int) throws -> (String, [String])
) async throws -> (Int, pid_t) {
    for _ in 0..<5 {
        let candidate = try freeLoopbackPort()
        let (executable, arguments) = try command(candidate)
        let started = try spawnQuietly(executable, arguments, environment: ProcessInfo.processInfo.environment)
        // Until it accepts, or exits because the port was taken meanwhile.
        let accepting = await eventually { !isRunning(started) || loopbackPortAccepts(candidate) }
        if accepting, isRunning(started), listensOnLoopback(candidate, processOrChildOf: started) {
            return (candidate, started)
        }
        kill(started, SIGKILL)
        _ = await waitForExit(started)
    }
    throw TestSupportError("\(name) did not start; see \(log)")
}

/// tinyproxy from Debian's packages: a forward HTTP proxy that asks for Basic credentials
/// (user `proxy`, password `secret`, realm "Tinyproxy") and names itself in `Via`.
public final class TinyproxyServer: Sendable {
    public let port: Int
    private let pid: Int32
    public let directory: String
    public static let via = "keyjar-test-tinyproxy"

    public init() async throws {
        directory = NSTemporaryDirectory() + "keyjar-tinyproxy-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let directory = self.directory
        (port, pid) = try await spawnOnFreePort(name: "tinyproxy", log: "\(directory)/tinyproxy.log") { candidate in
            let configuration = """
                Port \(candidate)
                Listen 127.0.0.1
                Timeout 60
                MaxClients 50
                LogLevel Connect
                LogFile "\(directory)/tinyproxy.log"
                Allow 127.0.0.1
                BasicAuth proxy secret
                ViaProxyName "\(Self.via)"
                """
            try Data(configuration.utf8).write(to: URL(fileURLWithPath: "\(directory)/tinyproxy.conf"))
            return ("/usr/bin/tinyproxy", ["-d", "-c", "\(directory)/tinyproxy.conf"])
        }
    }

    public var url: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// The requests it forwarded (its log's `Request` lines).
    public func requests() -> [String] {
        let log = (try? String(contentsOfFile: "\(directory)/tinyproxy.log", encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0.contains("]: Request ") }.map(String.init)
    }

    deinit {
        kill(pid, SIGKILL)
        _ = reap(pid)
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// Dante (Debian's dante-server): a SOCKS v5 proxy without authentication that resolves names
/// itself and logs every connection it makes.
public final class DanteServer: Sendable {
    public let port: Int
    private let pid: Int32
    public let directory: String

    public init() async throws {
        directory = NSTemporaryDirectory() + "keyjar-dante-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let directory = self.directory
        // As root, Dante wants to be told which user it may act as; otherwise it is the caller.
        let users = getuid() == 0 ? "user.privileged: root\nuser.unprivileged: root\n" : ""
        (port, pid) = try await spawnOnFreePort(name: "danted", log: "\(directory)/danted.log") { candidate in
            let configuration = """
                logoutput: \(directory)/danted.log
                internal: 127.0.0.1 port = \(candidate)
                external: 127.0.0.1
                socksmethod: none
                clientmethod: none
                \(users)client pass {
                    from: 127.0.0.0/8 to: 0.0.0.0/0
                }
                socks pass {
                    from: 127.0.0.0/8 to: 0.0.0.0/0
                    command: connect
                    log: connect
                }
                """
            try Data(configuration.utf8).write(to: URL(fileURLWithPath: "\(directory)/danted.conf"))
            return ("/usr/sbin/danted", ["-f", "\(directory)/danted.conf", "-p", "\(directory)/danted.pid"])
        }
    }

    /// The connections it made for its clients, as `host.port` of the destination.
    public func connections() -> [String] {
        let log = (try? String(contentsOfFile: "\(directory)/danted.log", encoding: .utf8)) ?? ""
        return log.split(separator: "\n").filter { $0.contains("tcp/connect") }.compactMap { line in
            line.split(separator: " ").last.map(String.init)
        }
    }

    deinit {
        // SIGTERM: the main process takes its worker processes with it.
        kill(pid, SIGTERM)
        _ = reap(pid)
        try? FileManager.default.removeItem(atPath: directory)
    }
}

/// A loopback port nothing listens on right now.
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
            bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
        }
    }
    guard bound else { throw TestSupportError("no free port") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// Whether something accepts connections on a loopback port.
public func loopbackPortAccepts(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}

/// Whether the socket listening on 127.0.0.1:`port` is open in `pid` or one of its children
/// (a server that forks its workers): the kernel's socket table names the listener's inode, and
/// /proc/PID/fd the sockets a process holds.
public func listensOnLoopback(_ port: Int, processOrChildOf pid: pid_t) -> Bool {
    // "sl local_address rem_address st … inode": 0100007F is 127.0.0.1, state 0A is LISTEN.
    // Read to its end: the kernel makes the table a page at a time, and a read that trusts the
    // file's size (0) or takes one page misses the sockets after it.
    let table =
        FileHandle(forReadingAtPath: "/proc/net/tcp").map { file in
            defer { try? file.close() }
            return String(decoding: (try? file.readToEnd()) ?? Data(), as: UTF8.self)
        } ?? ""
    let local = "0100007F:" + String(format: "%04X", port)
    let inodes = table.split(separator: "\n").dropFirst().compactMap { line -> String? in
        let fields = line.split(separator: " ")
        guard fields.count > 9, fields[1] == local, fields[3] == "0A" else { return nil }
        return "socket:[\(fields[9])]"
    }
    guard !inodes.isEmpty else { return false }
    let children = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap {
        entry -> pid_t? in
        guard let child = pid_t(entry),
            let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
            let end = stat.lastIndex(of: ")")
        else { return nil }
        // After "pid (name)": state, then the parent's pid.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return fields.count > 1 && pid_t(fields[1]) == pid ? child : nil
    }
    return ([pid] + children).contains { process in
        let directory = "/proc/\(process)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).contains { descriptor in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(descriptor)"))
                .map(inodes.contains) ?? false
        }
    }
}

/// Runs a Python snippet and returns its standard output.
public func runPython(_ source: String) async throws -> String {
    try await runCommand("/usr/bin/env", ["python3", "-c", source]).output
}

/// Client identities made with the openssl command for one test: a CA, alice (issued by it;
/// also as a PKCS#12 bundle under a passphrase) and mallory (self-signed, so any server
/// trusting the CA refuses her).
public struct TestIdentities: Sendable {
    public let directory: String
    public var caPath: String { directory + "/ca.pem" }
    public var alicePEM: String { directory + "/alice.pem" }
    public var aliceP12: String { directory + "/alice.p12" }
    public var malloryPEM: String { directory + "/mallory.pem" }
    public static let p12Passphrase = "p12-secret"

    public init() async throws {
        directory = NSTemporaryDirectory() + "keyjar-identities-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let steps: [[String]] = [
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Keyjar Test CA",
                "-keyout", "\(directory)/ca.key", "-out", "\(directory)/ca.pem",
            ],
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=alice", "-keyout", "\(directory)/alice.key",
                "-out", "\(directory)/alice.csr",
            ],
            [
                "x509", "-req", "-in", "\(directory)/alice.csr", "-CA", "\(directory)/ca.pem", "-CAkey",
                "\(directory)/ca.key",
                "-CAcreateserial", "-days", "2", "-out", "\(directory)/alice.crt",
            ],
            [
                "pkcs12", "-export", "-in", "\(directory)/alice.crt", "-inkey", "\(directory)/alice.key", "-out",
                "\(directory)/alice.p12", "-passout", "pass:\(Self.p12Passphrase)",
            ],
            [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=mallory",
                "-keyout", "\(directory)/mallory.key", "-out", "\(directory)/mallory.crt",
            ],
        ]
        for step in steps {
            let result = try await runCommand("/usr/bin/openssl", step)
            guard result.status == 0 else { throw TestSupportError("openssl \(step[0]) failed: \(result.error)") }
        }
        for name in ["alice", "mallory"] {
            let pem =
                try String(contentsOfFile: "\(directory)/\(name).crt", encoding: .utf8)
                + String(contentsOfFile: "\(directory)/\(name).key", encoding: .utf8)
            try pem.write(toFile: "\(directory)/\(name).pem", atomically: true, encoding: .utf8)
        }
    }

    public func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

/// Whether a child started by `spawnQuietly` is still running (reaping it if it ended).
func isRunning(_ pid: pid_t) -> Bool {
    var status: Int32 = 0
    return waitpid(pid, &status, WNOHANG) == 0
}
