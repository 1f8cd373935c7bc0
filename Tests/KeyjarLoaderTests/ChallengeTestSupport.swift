import Foundation
import FoundationNetworking
import KeyjarLoader
import KeyjarTestSupport
import Glibc
import Synchronization

/// How a test delegate answers a challenge.
enum TestAnswer: Sendable {
    case use(user: String, password: String, persistence: URLCredential.Persistence)
    case credential(URLCredential)
    case continueWithout, cancel, performDefault, reject
    /// Never answers: the load waits until it is cancelled.
    case hold
}

/// What a delegate saw of one challenge.
struct SeenChallenge: Sendable, Equatable {
    var method: String
    var realm: String?
    var host: String
    var port: Int = 0
    var isProxy: Bool
    var previousFailureCount: Int
    var proposedUser: String?
    var failureStatus: Int?
    var serverTrust: ServerTrust?
    var errorCode: URLError.Code?

    init(_ challenge: URLAuthenticationChallenge) {
        let space = challenge.protectionSpace
        method = space.authenticationMethod
        realm = space.realm
        host = space.host
        port = space.port
        isProxy = space.isProxy()
        previousFailureCount = challenge.previousFailureCount
        proposedUser = challenge.proposedCredential?.user
        failureStatus = (challenge.failureResponse as? HTTPURLResponse)?.statusCode
        serverTrust = (space as? ServerTrustProtectionSpace)?.serverTrust
        errorCode = (challenge.error as? URLError)?.code
    }

    /// The method without Foundation's prefix, for event lists.
    var shortMethod: String { method.replacingOccurrences(of: "NSURLAuthenticationMethod", with: "") }
}

/// A delegate with `willSendRequestFor`: answers challenges from a script, records the rest
/// (challenges and cancellations among the events) through an inner RecordingDelegate.
final class ChallengeDelegate: LoaderConnectionAuthenticationDelegate, @unchecked Sendable {
    // @unchecked: state is behind locks; `answers` is immutable.
    let recorder = RecordingDelegate()
    let seen = Mutex<[SeenChallenge]>([])
    let held = Mutex<[URLAuthenticationChallenge]>([])
    let shouldUseAsked = Atomic<Int>(0)
    private let answers: @Sendable (SeenChallenge) -> TestAnswer

    init(answers: @escaping @Sendable (SeenChallenge) -> TestAnswer) {
        self.answers = answers
    }

    var challenges: [SeenChallenge] { seen.withLock { $0 } }

    func connection(_ connection: LoaderConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
        let record = SeenChallenge(challenge)
        seen.withLock { $0.append(record) }
        recorder.record(.challenge(method: record.shortMethod, failures: record.previousFailureCount, proposed: record.proposedUser))
        guard let sender = challenge.sender else { return }
        switch answers(record) {
        case .use(let user, let password, let persistence):
            sender.use(URLCredential(user: user, password: password, persistence: persistence), for: challenge)
        case .credential(let credential): sender.use(credential, for: challenge)
        case .continueWithout: sender.continueWithoutCredential(for: challenge)
        case .cancel: sender.cancel(challenge)
        case .performDefault: sender.performDefaultHandling(for: challenge)
        case .reject: sender.rejectProtectionSpaceAndContinue(with: challenge)
        case .hold: held.withLock { $0.append(challenge) }
        }
    }

    /// Never called for a delegate with `willSendRequestFor` (Apple's rule); counted to check.
    func connectionShouldUseCredentialStorage(_ connection: LoaderConnection) -> Bool {
        shouldUseAsked.add(1, ordering: .relaxed)
        return false
    }
    func connection(_ connection: LoaderConnection, didCancel challenge: URLAuthenticationChallenge) { recorder.record(.challengeCancelled) }
    func connection(_ connection: LoaderConnection, willSend request: URLRequest, redirectResponse: URLResponse?) -> URLRequest? {
        recorder.connection(connection, willSend: request, redirectResponse: redirectResponse)
    }
    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) { recorder.connection(connection, didReceive: response) }
    func connection(_ connection: LoaderConnection, didReceive data: Data) { recorder.connection(connection, didReceive: data) }
    func connectionDidFinishLoading(_ connection: LoaderConnection) { recorder.connectionDidFinishLoading(connection) }
    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) { recorder.connection(connection, didFailWithError: error) }
}

/// The older trio: refuses every space in `canAuthenticateAgainst` when told to, and says
/// whether the credential storage may be used.
final class LegacyDelegate: LoaderConnectionLegacyAuthenticationDelegate, @unchecked Sendable {
    let recorder = RecordingDelegate()
    let received = Atomic<Int>(0)
    let seen = Mutex<[SeenChallenge]>([])
    let canAuthenticate: Bool
    let storageAllowed: Bool
    let persistence: URLCredential.Persistence
    let user: String

    init(canAuthenticate: Bool, storageAllowed: Bool = true, persistence: URLCredential.Persistence = .none, user: String = "alice") {
        self.canAuthenticate = canAuthenticate
        self.storageAllowed = storageAllowed
        self.persistence = persistence
        self.user = user
    }

    var challenges: [SeenChallenge] { seen.withLock { $0 } }

    func connectionShouldUseCredentialStorage(_ connection: LoaderConnection) -> Bool {
        recorder.record(.shouldUseCredentialStorage)
        return storageAllowed
    }
    func connection(_ connection: LoaderConnection, canAuthenticateAgainst protectionSpace: URLProtectionSpace) -> Bool { canAuthenticate }
    func connection(_ connection: LoaderConnection, didReceive challenge: URLAuthenticationChallenge) {
        received.add(1, ordering: .relaxed)
        let record = SeenChallenge(challenge)
        seen.withLock { $0.append(record) }
        recorder.record(.challenge(method: record.shortMethod, failures: record.previousFailureCount, proposed: record.proposedUser))
        challenge.sender?.use(URLCredential(user: user, password: "wonderland", persistence: persistence), for: challenge)
    }
    func connection(_ connection: LoaderConnection, didCancel challenge: URLAuthenticationChallenge) { recorder.record(.challengeCancelled) }
    func connection(_ connection: LoaderConnection, willSend request: URLRequest, redirectResponse: URLResponse?) -> URLRequest? {
        recorder.connection(connection, willSend: request, redirectResponse: redirectResponse)
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

    /// - Parameters:
    ///   - tls: serve HTTPS (HTTP/2 by ALPN) with a self-signed certificate.
    ///   - clientCA: with TLS, require a client certificate issued by this CA (a PEM file).
    init(tls: Bool = false, clientCA: String? = nil) throws {
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
            if let clientCA {
                tlsLines += """

                    ssl.ca-file = "\(clientCA)"
                    ssl.verifyclient.activate = "enable"
                    ssl.verifyclient.enforce = "enable"
                    """
            }
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

/// Client identities made with the openssl command for one test: a CA, alice (issued by it;
/// also as a PKCS#12 bundle under a passphrase) and mallory (self-signed, so any server
/// trusting the CA refuses her).
struct TestIdentities {
    let directory: String
    var caPath: String { directory + "/ca.pem" }
    var alicePEM: String { directory + "/alice.pem" }
    var aliceP12: String { directory + "/alice.p12" }
    var malloryPEM: String { directory + "/mallory.pem" }
    static let p12Passphrase = "p12-secret"

    init() throws {
        directory = NSTemporaryDirectory() + "keyjar-identities-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let steps: [[String]] = [
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=Keyjar Test CA",
             "-keyout", "\(directory)/ca.key", "-out", "\(directory)/ca.pem"],
            ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=alice", "-keyout", "\(directory)/alice.key",
             "-out", "\(directory)/alice.csr"],
            ["x509", "-req", "-in", "\(directory)/alice.csr", "-CA", "\(directory)/ca.pem", "-CAkey", "\(directory)/ca.key",
             "-CAcreateserial", "-days", "2", "-out", "\(directory)/alice.crt"],
            ["pkcs12", "-export", "-in", "\(directory)/alice.crt", "-inkey", "\(directory)/alice.key", "-out",
             "\(directory)/alice.p12", "-passout", "pass:\(Self.p12Passphrase)"],
            ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=mallory",
             "-keyout", "\(directory)/mallory.key", "-out", "\(directory)/mallory.crt"],
        ]
        for step in steps {
            let result = try runCommand("/usr/bin/openssl", step)
            guard result.status == 0 else { throw TestSupportError("openssl \(step[0]) failed: \(result.error)") }
        }
        for name in ["alice", "mallory"] {
            let pem = try String(contentsOfFile: "\(directory)/\(name).crt", encoding: .utf8)
                + String(contentsOfFile: "\(directory)/\(name).key", encoding: .utf8)
            try pem.write(toFile: "\(directory)/\(name).pem", atomically: true, encoding: .utf8)
        }
    }

    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}
