import Foundation
import Glibc
import KeyjarTestSupport
import Testing

/// In a directory every user can write to (sticky and world-writable, as /tmp), another user can
/// plant a symbolic link, a FIFO or a file under the name `keyjar fetch -o` or `cookie export -o`
/// is about to write, to redirect the write or to read it. The real `keyjar` refuses each, as the
/// kernel's `protected_symlinks`/`protected_fifos` would refuse a plain `open` (they are off on
/// this machine, and never apply to a link followed by hand). The planting user is uid 65534:
/// making files of another user needs root, so without it these are skipped.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct PlantedFileTests {
    static let other: uid_t = 65534

    struct Fixture {
        let keyjar: KeyjarCLI
        let server: LocalHTTPServer
        let directory: TemporaryDirectory
        /// Sticky and world-writable, like /tmp.
        let shared: String

        init() async throws {
            let daemon = try await DaemonProcess()
            keyjar = KeyjarCLI(daemon: daemon)
            server = try await LocalHTTPServer(script: FetchCommandTests.server)
            directory = daemon.directory
            shared = directory.path("shared")
            #expect(mkdir(shared, 0o777) == 0 && chmod(shared, 0o1777) == 0)
        }

        var url: String { server.base + "/hello" }

        /// A symbolic link at `name` in the shared directory to `target`, owned by `owner`.
        func plantLink(_ name: String, to target: String, owner: uid_t = other) throws -> String {
            let link = shared + "/" + name
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
            #expect(lchown(link, owner, owner) == 0)
            return link
        }
    }

    @Test(.enabled(if: getuid() == 0, "needs root to make a file of another user"))
    func aLinkAnotherUserPlantedIsNotFollowed() async throws {
        let fixture = try await Fixture()
        let victim = fixture.directory.path("victim.txt")
        try "precious".write(toFile: victim, atomically: true, encoding: .utf8)
        let link = try fixture.plantLink("out", to: victim)
        for arguments in [["cookie", "export", "-o", link], ["fetch", "-s", "-o", link, fixture.url]] {
            let refused = try await fixture.keyjar.run(arguments)
            #expect(refused.status == 1, "\(arguments): \(refused.error)")
            #expect(refused.error.contains("will not write \(link)"), "\(refused.error)")
            #expect(refused.error.contains("belongs to uid \(Self.other)"), "\(refused.error)")
            #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious", "\(arguments)")
        }
        // A planted link anywhere on the way, not only the last name: `shared/build/out` with
        // `shared/build` another user's link to a directory of the victim's.
        let victims = fixture.directory.path("victims")
        #expect(mkdir(victims, 0o700) == 0)
        let build = try fixture.plantLink("build", to: victims)
        let through = try await fixture.keyjar.run(["fetch", "-s", "-o", build + "/out", fixture.url])
        #expect(through.status == 1 && through.error.contains("the symbolic link \(build)"), "\(through.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: victims).isEmpty)
        // The user's own link there, or one of the directory's owner, is followed as ever.
        let mine = try fixture.plantLink("mine", to: victim, owner: getuid())
        try await fixture.keyjar.ok("fetch", "-s", "-o", mine, fixture.url)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "hello\n")
    }

    @Test(.enabled(if: getuid() == 0, "needs root to make a file of another user"))
    func aFIFOOrFileAnotherUserPlantedGetsNothing() async throws {
        let fixture = try await Fixture()
        let fifo = fixture.shared + "/fifo"
        #expect(mkfifo(fifo, 0o666) == 0 && chown(fifo, Self.other, Self.other) == 0)
        // Its planter reads it: whatever keyjar wrote there would be theirs.
        async let planterRead = runCommand("/bin/cat", [fifo])
        for arguments in [["fetch", "-s", "-o", fifo, fixture.url], ["cookie", "export", "-o", fifo]] {
            let refused = try await fixture.keyjar.run(arguments)
            #expect(refused.status == 1 && refused.error.contains("belongs to uid \(Self.other)"), "\(refused.error)")
        }
        // An end for the reader: a writer that writes nothing.
        try await waitUntil("cat opening the FIFO") {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            guard writer >= 0 else { return false }
            close(writer)
            return true
        }
        #expect(try await planterRead.output == "")

        // A regular file of theirs under the name is not taken over either.
        let file = fixture.shared + "/theirs.txt"
        #expect(FileManager.default.createFile(atPath: file, contents: Data("theirs".utf8)))
        #expect(chown(file, Self.other, Self.other) == 0)
        let replaced = try await fixture.keyjar.run(["fetch", "-s", "-o", file, fixture.url])
        #expect(replaced.status == 1 && replaced.error.contains("belongs to uid \(Self.other)"), "\(replaced.error)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "theirs")
    }

    /// A download goes through `NAME.keyjar-part` beside its name: one planted there (world-
    /// writable, to read the download as it comes) is never written into.
    @Test(.enabled(if: getuid() == 0, "needs root to make a file of another user"))
    func aPartialFileAnotherUserPlantedIsNotWrittenInto() async throws {
        let fixture = try await Fixture()
        let output = fixture.shared + "/download"
        let planted = output + ".keyjar-part"
        #expect(FileManager.default.createFile(atPath: planted, contents: nil))
        #expect(chmod(planted, 0o666) == 0 && chown(planted, Self.other, Self.other) == 0)
        let planter = try #require(FileHandle(forReadingAtPath: planted))
        defer { try? planter.close() }

        try await fixture.keyjar.ok("fetch", "-s", "-o", output, fixture.url)
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "hello\n")
        #expect(try planter.readToEnd() == nil, "the planted file received the download")

        // Continuing (-C) from a partial file that became theirs is refused: a download cut
        // short keeps its partial data and record, then the file changes hands.
        let cut = fixture.shared + "/cut"
        let truncated = fixture.server.base + "/cut"
        let failed = try await fixture.keyjar.run(["fetch", "-s", "-o", cut, truncated])
        #expect(failed.status != 0 && FileManager.default.fileExists(atPath: cut + ".keyjar-resume"), "\(failed.error)")
        #expect(chown(cut + ".keyjar-part", Self.other, Self.other) == 0)
        let refused = try await fixture.keyjar.run(["fetch", "-s", "-C", "-o", cut, truncated])
        #expect(refused.status == 1 && refused.error.contains("not a file of yours"), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: cut))
    }
}
