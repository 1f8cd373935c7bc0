import Foundation
import Glibc
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarTestSupport
import Testing

/// The socket is private, passwords stay in the Secret Service.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ServerSecurityTests {
    @Test func socketAndDirectoryArePrivate() async throws {
        let daemon = try await DaemonProcess()
        let directory = try FileManager.default.attributesOfItem(
            atPath: (daemon.socketPath as NSString).deletingLastPathComponent
        )
        #expect((directory[.posixPermissions] as? Int) == 0o700)
        let socket = try FileManager.default.attributesOfItem(atPath: daemon.socketPath)
        #expect((socket[.posixPermissions] as? Int) == 0o600)
    }

    @Test func withoutASecretServiceCookiesWorkAndPermanentCredentialsFailClearly() async throws {
        // No session bus at all: an environment with neither the address nor a bus socket.
        let directory = try TemporaryDirectory()
        let environment = [
            "HOME": directory.path, "XDG_RUNTIME_DIR": directory.path, "PATH": "/usr/bin:/bin",
        ]
        // Asked for: left to choose, keyjard would take the encrypted file here.
        let daemon = try await DaemonProcess(
            in: directory,
            arguments: ["--secrets", "secret-service"],
            environment: environment
        )
        let client = try TestClient(socketPath: daemon.socketPath)
        #expect(try client.setCookies(["still=works"], from: "https://example.com/") == [nil])
        let space = ProtectionSpace(
            host: "example.com",
            protocol: "https",
            realm: "r",
            authenticationMethod: .httpBasic
        )
        do {
            _ = try client.call(
                .setCredential(space: space, user: "alice", password: "never-stored", makeDefault: false)
            )
            Issue.record("storing a permanent credential without a Secret Service succeeded")
        } catch let error as WireError {
            #expect(error.code == WireError.secretsUnavailable)
            #expect(error.message.contains("No Secret Service"))
            #expect(error.message.contains("--secrets file"))
            #expect(!error.message.contains("never-stored"))
        }
        let reply = try client.call(.status)
        guard case .status(let status) = reply else {
            Issue.record("expected a status reply, got \(reply)")
            return
        }
        #expect(!status.secretsHealthy)
        #expect(status.credentialCount == 0)
        #expect(daemon.log.contains("no usable secret store"))
    }

    @Test func databaseFilesArePrivate() async throws {
        let daemon = try await DaemonProcess()
        try TestClient(socketPath: daemon.socketPath).setCookies(["a=1; Max-Age=86400"], from: "https://example.com/")
        for suffix in ["", "-wal", "-shm"] {
            let attributes = try FileManager.default.attributesOfItem(atPath: daemon.databasePath + suffix)
            #expect((attributes[.posixPermissions] as? Int) == 0o600, "store.sqlite3\(suffix)")
        }
        #expect(await daemon.stop() == 0)
    }

    @Test(.enabled(if: getuid() == 0, "needs root to run a client as another user"))
    func aPeerOfAnotherUserIsRefused() async throws {
        let daemon = try await DaemonProcess()
        // Open the file-system path on purpose, so that only keyjard's SO_PEERCRED check stands.
        chmod(daemon.directory.path, 0o755)
        chmod((daemon.socketPath as NSString).deletingLastPathComponent, 0o755)
        chmod(daemon.socketPath, 0o777)
        let script = """
            import socket, struct, json, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
            b = json.dumps({"id": 1, "request": {"hello": {"version": 4, "client": "intruder"}}}).encode()
            try:
                s.sendall(struct.pack(">I", len(b)) + b)
            except OSError:
                pass
            data = b""
            while True:
                c = s.recv(65536)
                if not c: break
                data += c
            print(data[4:].decode())
            """
        let result = try await runCommand(
            "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, daemon.socketPath]
        )
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("keyjard serves only its own user"))
        #expect(!result.output.contains("hello"))
        #expect(daemon.log.contains("refused a client of another user"))
    }

    /// keyjard is not dumpable: no core file, and no other process of its user may trace it or
    /// read its memory. The kernel shows it in /proc: a non-dumpable process's entries belong to
    /// root, whoever it runs as, so keyjard runs here as uid 65534 (root only, skipped otherwise).
    @Test(.enabled(if: getuid() == 0, "needs root to run keyjard as another user"))
    func keyjardIsNotDumpable() async throws {
        let directory = try TemporaryDirectory()
        #expect(chown(directory.path, 65534, 65534) == 0)
        let daemon = try await DaemonProcess(
            in: directory,
            arguments: ["--secrets", "file"],
            launcher: ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        )
        var process = stat()
        #expect(stat("/proc/\(daemon.pid)/status", &process) == 0)
        let owner = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("Uid:") }
        #expect(owner?.split(whereSeparator: \.isWhitespace).dropFirst().first == "65534", "it runs as 65534")
        #expect(process.st_uid == 0, "/proc/PID of a dumpable process belongs to its user")
        #expect(daemon.log.contains("not dumpable"), "\(daemon.log)")
        #expect(await daemon.stop() == 0)
    }

    @Test func passwordLivesOnlyInTheSecretService() async throws {
        let daemon = try await DaemonProcess()
        let password = "pw-\(UUID().uuidString)"
        let host = "secrets-\(UUID().uuidString.prefix(8).lowercased()).example"
        let space = ProtectionSpace(
            host: host,
            protocol: "https",
            realm: "Admin Area",
            authenticationMethod: .httpBasic
        )
        let watcher = try TestClient(socketPath: daemon.socketPath)
        _ = try watcher.call(.subscribe(after: nil))
        let client = try TestClient(socketPath: daemon.socketPath)
        _ = try client.call(.setCredential(space: space, user: "alice", password: password, makeDefault: true))

        // The real secret-tool finds it under Keyjar's schema.
        let lookup = try await runCommand(
            "/usr/bin/secret-tool",
            ["lookup", "keyjar-server", host, "keyjar-user", "alice", "keyjar-protocol", "https", "keyjar-port", "443"]
        )
        #expect(lookup.output == password)

        // Listings and events carry the space and user, never the password.
        let listing = try client.call(.allCredentials)
        guard case .credentials(let records) = listing else {
            Issue.record("expected a credential listing, got \(listing)")
            return
        }
        #expect(records.map(\.user) == ["alice"] && records.first?.isDefault == true)
        let event = try #require(try watcher.nextPushed())
        #expect(!String(describing: event).contains(password))
        #expect(String(decoding: MessageCoding.encode(event), as: UTF8.self).contains("alice"))
        #expect(!String(decoding: MessageCoding.encode(event), as: UTF8.self).contains(password))

        // Fetched on demand only.
        #expect(try client.call(.password(space: space, user: "alice")) == .password(password: password))
        #expect(try client.call(.password(space: space, user: "mallory")) == .password(password: nil))

        #expect(await daemon.stop() == 0)
        for suffix in ["", "-wal", "-shm"] {
            let data = (try? Data(contentsOf: URL(fileURLWithPath: daemon.databasePath + suffix))) ?? Data()
            #expect(data.range(of: Data(password.utf8)) == nil, "password found in the database file\(suffix)")
            #expect(suffix != "" || data.range(of: Data("alice".utf8)) != nil, "the database should hold the metadata")
        }
        #expect(!daemon.log.contains(password))

        // Removing deletes it from the Secret Service too.
        let restarted = try await daemon.restarted()
        _ = try TestClient(socketPath: restarted.socketPath).call(.removeCredential(space: space, user: "alice"))
        let gone = try await runCommand(
            "/usr/bin/secret-tool",
            ["lookup", "keyjar-server", host, "keyjar-user", "alice"]
        )
        #expect(gone.output.isEmpty)
    }
}
