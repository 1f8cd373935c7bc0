import Foundation
import Glibc
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarStore
import KeyjarTestSupport
import Testing

/// keyjard's disk fills up: its database lives on a 2 MiB tmpfs of its own (a private mount
/// namespace, so nothing outside the test sees it), which a ballast file fills.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ServerDiskFullTests {
    /// `unshare` can give a process a tmpfs of its own here: as root, or in a user namespace.
    static let launcherPrefix: [String] =
        ["/usr/bin/unshare"] + (getuid() == 0 ? [] : ["--map-root-user"]) + ["--mount", "--propagation", "private"]

    static func canMountPrivateTmpfs() async -> Bool {
        guard let directory = try? TemporaryDirectory() else { return false }
        let probe = try? await runCommand(
            launcherPrefix[0],
            Array(launcherPrefix.dropFirst()) + [
                "/bin/mount", "-t", "tmpfs", "-o", "size=64k", "probe", directory.path,
            ]
        )
        return probe?.status == 0
    }

    @Test(.enabled("needs a private mount namespace (root or user namespaces)") { await canMountPrivateTmpfs() })
    func aFullDiskFailsWritesClearlyLosesNothingAndServiceResumes() async throws {
        let secrets = try await PrivateSecretService()
        let directory = try TemporaryDirectory()
        let data = directory.path("data")
        try FileManager.default.createDirectory(
            atPath: data,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        let daemon = try await DaemonProcess(
            in: directory,
            environment: secrets.environment,
            launcher: Self.launcherPrefix + [
                "/bin/sh", "-c", #"mount -t tmpfs -o size=2m,mode=0700 keyjar-full "$0" && exec "$@""#, data,
            ]
        )
        // keyjard's view of its directory: the tmpfs exists only in its mount namespace.
        let mounted = "/proc/\(daemon.pid)/root\(data)"
        let client = try TestClient(socketPath: daemon.socketPath)
        let big = String(repeating: "x", count: 3000)
        var acknowledged: [String] = []
        for index in 0..<20 {
            #expect(try client.setCookies(["k\(index)=\(big); Max-Age=3600"], from: "https://full.example/") == [nil])
            acknowledged.append("k\(index)")
        }
        #expect(try Self.credential(client, "alice") == nil)

        // Fill what is left, then write until a write is refused.
        let ballast = mounted + "/ballast"
        try Self.fill(ballast)
        var failure: WireError?
        for index in 20..<2_000 where failure == nil {
            do {
                #expect(
                    try client.setCookies(["k\(index)=\(big); Max-Age=3600"], from: "https://full.example/") == [nil]
                )
                acknowledged.append("k\(index)")
            } catch let error as WireError {
                failure = error
            }
        }
        let refused = try #require(failure, "no write failed on a full disk")
        #expect(refused.code == WireError.storageFailure)
        #expect(refused.message.contains("full"), "\(refused.message)")

        // While it is full, reads and the service go on, and a write is refused the same way —
        // or, where SQLite finds room in the files it already has, acknowledged and kept: once
        // a checkpoint has run (every second; whether one ran depends on how long the test took
        // to get here) the WAL starts over in its own space. Never half done: a refused cookie
        // is not kept, and a credential whose record cannot be committed leaves no password.
        for attempt in 0..<5 {
            try Self.fill(ballast)
            do {
                #expect(try client.setCookies(["late\(attempt)=1"], from: "https://full.example/") == [nil])
                acknowledged.append("late\(attempt)")
            } catch let error as WireError {
                #expect(error.code == WireError.storageFailure, "\(error)")
            }
        }
        try Self.fill(ballast)
        let credentialError = try Self.credential(client, "bob")
        if let credentialError {
            #expect(credentialError.code == WireError.storageFailure)
            #expect(!credentialError.message.contains("pw-"))
        }
        let full = try Self.status(client)
        #expect(full.credentialMismatches == [])
        #expect(full.credentialCount == (credentialError == nil ? 2 : 1))
        #expect(try client.cookieHeader(for: "https://full.example/")?.contains("k0=") == true)

        // Nothing acknowledged is lost, nothing refused was kept.
        var stored = Set(try client.snapshot().cookies.map(\.name))
        #expect(stored == Set(acknowledged))

        // Space returns: writes succeed again, and the database is sound.
        try FileManager.default.removeItem(atPath: ballast)
        #expect(try client.setCookies(["after=1; Max-Age=3600"], from: "https://full.example/") == [nil])
        #expect(try Self.credential(client, "bob") == nil)
        stored = Set(try client.snapshot().cookies.map(\.name))
        #expect(stored == Set(acknowledged + ["after"]))
        #expect(try Self.status(client).credentialMismatches == [])
        #expect(try StoreDatabase(path: mounted + "/store.sqlite3").integrityCheck() == "ok")
        #expect(daemon.isRunning)
    }

    /// Stores a credential; nil when committed, else the error.
    private static func credential(_ client: TestClient, _ user: String) throws -> WireError? {
        let space = ProtectionSpace(host: "full.example", protocol: "https")
        do {
            let reply = try client.call(
                .setCredential(space: space, user: user, password: "pw-\(user)", makeDefault: false)
            )
            guard case .committed = reply else { throw TestSupportError("set \(user): \(reply)") }
            return nil
        } catch let error as WireError {
            return error
        }
    }

    private static func status(_ client: TestClient) throws -> ServiceStatus {
        let reply = try client.call(.status)
        guard case .status(let status) = reply else { throw TestSupportError("status: \(reply)") }
        return status
    }

    /// Writes a file until the file system refuses more.
    /// Writes to the ballast file (created, or added to) until the file system is full.
    private static func fill(_ path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        guard descriptor >= 0 else {
            throw TestSupportError("cannot create the ballast: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let written = chunk.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                guard errno == ENOSPC else { throw TestSupportError("ballast: \(String(cString: strerror(errno)))") }
                return
            }
        }
    }
}
