import Foundation
import Glibc
import KeyjarPlatform
import KeyjarTestSupport
import Testing

/// The one rule for the socket's, the store's and a cache's directory.
@Suite struct PrivateDirectoryTests {
    private func mode(_ path: String) throws -> mode_t {
        var status = stat()
        guard stat(path, &status) == 0 else { throw TestSupportError("stat \(path): \(errno)") }
        return status.st_mode & 0o777
    }

    @Test func aMissingDirectoryIsMadeWithItsParentsForTheUserAlone() throws {
        let temporary = try TemporaryDirectory()
        let path = temporary.path("a/b/c")
        try PrivateDirectory.make(path)
        #expect(try mode(temporary.path("a")) == 0o700)
        #expect(try mode(temporary.path("a/b")) == 0o700)
        #expect(try mode(path) == 0o700)
        // Making it again is a no-op, not an error.
        try PrivateDirectory.make(path)
    }

    @Test func anExistingLooserDirectoryIsTightened() throws {
        let temporary = try TemporaryDirectory()
        let path = temporary.path("shared")
        #expect(mkdir(path, 0o755) == 0)
        #expect(chmod(path, 0o755) == 0)
        try PrivateDirectory.make(path)
        #expect(try mode(path) == 0o700)
    }

    /// The store's directory may be one the user chose and shares (`--database /tmp/s.sqlite3`):
    /// made 0700 when missing, used as it is when not.
    @Test func aDirectoryTheUserChoseIsMadeIfMissingAndOtherwiseLeftAsItIs() throws {
        let temporary = try TemporaryDirectory()
        let missing = temporary.path("new/store")
        try PrivateDirectory.makeIfMissing(missing)
        #expect(try mode(temporary.path("new")) == 0o700)
        #expect(try mode(missing) == 0o700)
        let shared = temporary.path("shared")
        #expect(mkdir(shared, 0o755) == 0)
        #expect(chmod(shared, 0o755) == 0)
        try PrivateDirectory.makeIfMissing(shared)
        #expect(try mode(shared) == 0o755)
        #expect(FileManager.default.createFile(atPath: temporary.path("file"), contents: nil))
        let failure = #expect(throws: PrivateDirectory.Failure.self) {
            try PrivateDirectory.makeIfMissing(temporary.path("file"))
        }
        #expect(failure?.description == "\(temporary.path("file")) is not a directory")
    }

    @Test func aFileInItsPlaceIsRefusedAndLeftAlone() throws {
        let temporary = try TemporaryDirectory()
        let path = temporary.path("file")
        #expect(FileManager.default.createFile(atPath: path, contents: Data("x".utf8)))
        #expect(chmod(path, 0o644) == 0)
        let failure = #expect(throws: PrivateDirectory.Failure.self) { try PrivateDirectory.make(path) }
        #expect(failure?.description == "\(path) is not a directory")
        #expect(try mode(path) == 0o644)
    }

    @Test func aParentThatCannotHoldItSaysWhy() throws {
        let temporary = try TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: temporary.path("file"), contents: nil))
        let path = temporary.path("file/sub")
        let failure = #expect(throws: PrivateDirectory.Failure.self) { try PrivateDirectory.make(path) }
        #expect(failure?.description.hasPrefix("\(path) cannot be created: ") == true)
    }

    @Test(.enabled(if: getuid() == 0, "only root can give a directory to another user"))
    func anotherUsersDirectoryIsRefusedAndLeftAsItIs() throws {
        let temporary = try TemporaryDirectory()
        let path = temporary.path("theirs")
        #expect(mkdir(path, 0o755) == 0)
        #expect(chown(path, 65534, 65534) == 0)
        let failure = #expect(throws: PrivateDirectory.Failure.self) { try PrivateDirectory.make(path) }
        #expect(failure?.description == "\(path) belongs to uid 65534, not to you (uid 0)")
        #expect(try mode(path) == 0o755)
    }

    /// A link in the directory's place (in /tmp, another user's, to a directory they chose) is
    /// neither made private nor used.
    @Test func aLinkInItsPlaceIsRefused() throws {
        let temporary = try TemporaryDirectory()
        let target = temporary.path("target")
        #expect(mkdir(target, 0o755) == 0 && chmod(target, 0o755) == 0)
        let link = temporary.path("link")
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
        let failure = #expect(throws: PrivateDirectory.Failure.self) { try PrivateDirectory.make(link) }
        #expect(failure?.description == "\(link) is a symbolic link, not a directory")
        #expect(try mode(target) == 0o755)
        #expect(PrivateDirectory.problem(with: link)?.description == "\(link) is a symbolic link, not a directory")
    }

    /// What a client checks of a socket's directory before it trusts the socket, changing nothing.
    @Test func aClientsCheckNamesWhatIsWrong() throws {
        let temporary = try TemporaryDirectory()
        let path = temporary.path("run")
        try PrivateDirectory.make(path)
        #expect(PrivateDirectory.problem(with: path) == nil)
        #expect(chmod(path, 0o750) == 0)
        #expect(
            PrivateDirectory.problem(with: path)?.description == "\(path) is open to other users (mode 750), not 0700"
        )
        #expect(try mode(path) == 0o750, "the check changes nothing")
        let file = temporary.path("file")
        #expect(FileManager.default.createFile(atPath: file, contents: nil))
        #expect(PrivateDirectory.problem(with: file)?.description == "\(file) is not a directory")
        if getuid() == 0 {
            #expect(chmod(path, 0o700) == 0 && chown(path, 65534, 65534) == 0)
            #expect(
                PrivateDirectory.problem(with: path)?.description == "\(path) belongs to uid 65534, not to you (uid 0)"
            )
        }
    }
}
