import Foundation
import FoundationNetworking
import KeyjarLoader
import KeyjarTestSupport
import Glibc
import Synchronization

/// How a test delegate answers a challenge.
enum TestAnswer: Sendable {
    case use(user: String, password: String, persistence: URLCredential.Persistence)
    case continueWithout, cancel, performDefault, reject
}

/// What a delegate saw of one challenge.
struct SeenChallenge: Sendable, Equatable {
    var method: String
    var realm: String?
    var host: String
    var isProxy: Bool
    var previousFailureCount: Int
    var proposedUser: String?
    var failureStatus: Int?
}

/// A delegate with `willSendRequestFor`: answers challenges from a script, records the rest
/// through an inner RecordingDelegate.
final class ChallengeDelegate: LoaderConnectionAuthenticationDelegate, @unchecked Sendable {
    // @unchecked: state is behind locks; `answers` is immutable.
    let recorder = RecordingDelegate()
    let seen = Mutex<[SeenChallenge]>([])
    private let answers: @Sendable (SeenChallenge) -> TestAnswer
    private let storageAllowed: Bool

    init(storageAllowed: Bool = true, answers: @escaping @Sendable (SeenChallenge) -> TestAnswer) {
        self.answers = answers
        self.storageAllowed = storageAllowed
    }

    var challenges: [SeenChallenge] { seen.withLock { $0 } }

    func connection(_ connection: LoaderConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
        let space = challenge.protectionSpace
        let record = SeenChallenge(
            method: space.authenticationMethod, realm: space.realm, host: space.host, isProxy: space.isProxy(),
            previousFailureCount: challenge.previousFailureCount, proposedUser: challenge.proposedCredential?.user,
            failureStatus: (challenge.failureResponse as? HTTPURLResponse)?.statusCode)
        seen.withLock { $0.append(record) }
        guard let sender = challenge.sender else { return }
        switch answers(record) {
        case .use(let user, let password, let persistence):
            sender.use(URLCredential(user: user, password: password, persistence: persistence), for: challenge)
        case .continueWithout: sender.continueWithoutCredential(for: challenge)
        case .cancel: sender.cancel(challenge)
        case .performDefault: sender.performDefaultHandling(for: challenge)
        case .reject: sender.rejectProtectionSpaceAndContinue(with: challenge)
        }
    }

    func connectionShouldUseCredentialStorage(_ connection: LoaderConnection) -> Bool { storageAllowed }
    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) { recorder.connection(connection, didReceive: response) }
    func connection(_ connection: LoaderConnection, didReceive data: Data) { recorder.connection(connection, didReceive: data) }
    func connectionDidFinishLoading(_ connection: LoaderConnection) { recorder.connectionDidFinishLoading(connection) }
    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) { recorder.connection(connection, didFailWithError: error) }
}

/// The older trio: refuses every space in `canAuthenticateAgainst` when told to.
final class LegacyDelegate: LoaderConnectionLegacyAuthenticationDelegate, @unchecked Sendable {
    let recorder = RecordingDelegate()
    let received = Atomic<Int>(0)
    let canAuthenticate: Bool

    init(canAuthenticate: Bool) { self.canAuthenticate = canAuthenticate }

    func connection(_ connection: LoaderConnection, canAuthenticateAgainst protectionSpace: URLProtectionSpace) -> Bool { canAuthenticate }
    func connection(_ connection: LoaderConnection, didReceive challenge: URLAuthenticationChallenge) {
        received.add(1, ordering: .relaxed)
        challenge.sender?.use(URLCredential(user: "alice", password: "wonderland", persistence: .none), for: challenge)
    }
    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) { recorder.connection(connection, didReceive: response) }
    func connection(_ connection: LoaderConnection, didReceive data: Data) { recorder.connection(connection, didReceive: data) }
    func connectionDidFinishLoading(_ connection: LoaderConnection) { recorder.connectionDidFinishLoading(connection) }
    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) { recorder.connection(connection, didFailWithError: error) }
}

/// lighttpd from Debian's packages, serving Digest (its own implementation) on a free port.
final class LighttpdServer: Sendable {
    let port: Int
    private let pid: Int32
    let directory: String

    let scheme: String

    /// - Parameter tls: serve HTTPS (HTTP/2 by ALPN) with a self-signed certificate.
    init(tls: Bool = false) throws {
        scheme = tls ? "https" : "http"
        directory = NSTemporaryDirectory() + "keyjar-lighttpd-\(UUID().uuidString.prefix(8))"
        let fileManager = FileManager.default
        for path in ["www/digest", "www/digest-md5", "www/plain"] {
            try fileManager.createDirectory(atPath: "\(directory)/\(path)", withIntermediateDirectories: true)
            try Data("secret page\n".utf8).write(to: URL(fileURLWithPath: "\(directory)/\(path)/index.txt"))
        }
        port = try freeLoopbackPort()
        // The password file holds HA1 = H(user:realm:password) in MD5 and SHA-256, written by
        // Python's hashlib (not by Keyjar).
        let htdigest = try runPython("""
            import hashlib
            for realm in ("keyjar-digest", "keyjar-md5"):
                for h in (hashlib.md5, hashlib.sha256):
                    print("alice:%s:%s" % (realm, h(("alice:%s:wonderland" % realm).encode()).hexdigest()))
            """)
        try Data(htdigest.utf8).write(to: URL(fileURLWithPath: "\(directory)/htdigest"))
        var tlsLines = ""
        if tls {
            let made = try runCommand("/usr/bin/openssl", [
                "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1",
                "-keyout", "\(directory)/key.pem", "-out", "\(directory)/cert.pem",
            ])
            guard made.status == 0 else { throw TestSupportError("openssl failed: \(made.error)") }
            tlsLines = """
                server.modules += ("mod_openssl")
                ssl.engine = "enable"
                ssl.pemfile = "\(directory)/cert.pem"
                ssl.privkey = "\(directory)/key.pem"
                server.feature-flags += ("server.h2proto" => "enable")
                """
        }
        let configuration = """
            server.document-root = "\(directory)/www"
            server.port = \(port)
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
        pid = try spawnQuietly("/usr/sbin/lighttpd", ["-D", "-f", "\(directory)/lighttpd.conf"], environment: ProcessInfo.processInfo.environment)
        // Serving once the port accepts.
        for _ in 0..<100 {
            if loopbackPortAccepts(port) { return }
            usleep(50_000)
        }
        kill(pid, SIGKILL)
        throw TestSupportError("lighttpd did not start on port \(port)")
    }

    deinit {
        kill(pid, SIGKILL)
        try? FileManager.default.removeItem(atPath: directory)
    }

    func url(_ path: String, user: String? = nil) -> URL {
        URL(string: "\(scheme)://\(user.map { "\($0)@" } ?? "")127.0.0.1:\(port)\(path)")!
    }
}

/// A loopback port nothing listens on right now.
func freeLoopbackPort() throws -> Int {
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
func loopbackPortAccepts(_ port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
    }
}

/// Runs a Python snippet and returns its standard output.
func runPython(_ source: String) throws -> String {
    try runCommand("/usr/bin/env", ["python3", "-c", source]).output
}
