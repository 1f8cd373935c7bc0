import Foundation
import Glibc
import KeyjarProtocol
import KeyjarTestSupport
import Testing

/// Where a client and keyjard look for the socket when nobody says: a shell without
/// XDG_RUNTIME_DIR (cron, `su`, ssh without pam_systemd) still finds the login's runtime
/// directory, which no other user can make; only without one does it fall back to /tmp.
struct KeyjarPathsTests {
    @Test func theSocketIsWhereTheEnvironmentOrTheLoginSays() throws {
        let temporary = try TemporaryDirectory()
        let login = temporary.path("run-user")
        #expect(
            KeyjarPaths.defaultSocketPath(environment: ["KEYJAR_SOCKET": "/s/k.sock"], loginRuntimeDirectory: login)
                == "/s/k.sock"
        )
        #expect(
            KeyjarPaths.defaultSocketPath(environment: ["XDG_RUNTIME_DIR": "/run/user/7"], loginRuntimeDirectory: login)
                == "/run/user/7/keyjar/keyjar.sock"
        )
        let fallback = "/tmp/keyjar-\(geteuid())/keyjar.sock"
        // No runtime directory of the login: /tmp.
        #expect(KeyjarPaths.defaultSocketPath(environment: [:], loginRuntimeDirectory: login) == fallback)
        // One that is the user's alone: there, as with XDG_RUNTIME_DIR set.
        #expect(mkdir(login, 0o700) == 0)
        #expect(
            KeyjarPaths.defaultSocketPath(environment: [:], loginRuntimeDirectory: login)
                == login + "/keyjar/keyjar.sock"
        )
        // One that others can enter is not the login's (nor one that is a link).
        #expect(chmod(login, 0o755) == 0)
        #expect(KeyjarPaths.defaultSocketPath(environment: [:], loginRuntimeDirectory: login) == fallback)
    }
}

/// The pointer beside a database: what keyjard writes is what a client reads, and a client
/// follows only a file of the user's own, never a link to one.
struct DatabasePointerTests {
    @Test func aPointerReadsBackAndOnlyFromTheUsersOwnFile() throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("store.sqlite3")
        let path = DatabasePointer.path(forDatabase: database)
        #expect(path == database + ".keyjard")
        let pointer = DatabasePointer(socketPath: "/run/user/1000/keyjar/keyjar.sock", pid: 4242)
        #expect(DatabasePointer(decoding: pointer.encoded) == pointer)
        try pointer.encoded.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(DatabasePointer.read(at: path) == pointer)
        for bad in [
            "", "keyjar-database-pointer 2\nsocket /s\npid 1\n", "keyjar-database-pointer 1\nsocket s\npid 1\n",
            "keyjar-database-pointer 1\nsocket /s\npid x\n",
        ] {
            #expect(DatabasePointer(decoding: bad) == nil, "\(bad.debugDescription)")
        }
        let link = directory.path("link.keyjard")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: path)
        #expect(DatabasePointer.read(at: link) == nil, "a link is not followed")
        if getuid() == 0 {
            #expect(chown(path, 65534, 65534) == 0)
            #expect(DatabasePointer.read(at: path) == nil, "another user's file is not read")
        }
    }
}
