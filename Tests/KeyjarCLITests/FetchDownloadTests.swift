import Foundation
import Glibc
import KeyjarTestSupport
import Testing

/// `keyjar fetch -o / -O / -C` against Debian's lighttpd: names from the server, unique names,
/// and a download killed with SIGKILL continued by the next run with only the remaining bytes
/// (the server's access log says what was asked for and sent).
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct FetchDownloadTests {
    let daemon: DaemonProcess
    let keyjar: KeyjarCLI
    let server: DownloadServer
    /// In front of `server`: a download without Range stalls after 256 KiB, so that a kill
    /// "midway" comes midway however busy the machine is.
    let relay: StallingRelay
    let directory: String

    init() async throws {
        daemon = try await DaemonProcess()
        keyjar = KeyjarCLI(daemon: daemon)
        server = try await DownloadServer()
        relay = try await StallingRelay(upstreamPort: server.port, stallAfter: 256 * 1024)
        directory = daemon.directory.path("downloads")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    func contents() -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    func size(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? -1
    }

    /// Starts `keyjar fetch ARGUMENTS` and kills it with SIGKILL once `partial` holds `bytes`.
    func killMidway(_ arguments: [String], partial: String, bytes: Int) async throws {
        var environment = keyjar.environment
        environment["KEYJAR_SOCKET"] = daemon.socketPath
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: KeyjarCLI.binary)
        process.arguments = ["fetch", "-s"] + arguments
        process.environment = childEnvironment(environment)
        try process.run()
        #expect(await eventually { size(partial) >= bytes })
        kill(process.processIdentifier, SIGKILL)
        try await waitForExit(process)
        #expect(process.terminationReason == .uncaughtSignal)
    }

    @Test func aDownloadKilledOutrightIsContinuedWithOnlyTheRemainingBytes() async throws {
        let entity = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        try server.put(entity, as: "image.iso")
        let url = relay.url("/files/image.iso").absoluteString
        let file = directory + "/image.iso"
        try await killMidway(["-o", file, url], partial: file + ".keyjar-part", bytes: 128 * 1024)

        // Nothing under the name itself; the partial data and its record beside it.
        #expect(contents() == ["image.iso.keyjar-part", "image.iso.keyjar-resume"])
        let kept = size(file + ".keyjar-part")
        #expect(kept >= 128 * 1024 && kept < entity.count)

        let resumed = try await keyjar.run(["fetch", "-s", "-C", "-o", file, url])
        #expect(resumed.status == 0, "\(resumed.error)")
        #expect(contents() == ["image.iso"])
        #expect(FileManager.default.contents(atPath: file) == entity)

        let requests = await server.requests(for: "/files/image.iso", atLeast: 2)
        let continued = try #require(requests.first { $0.range != nil })
        #expect(continued.range == "bytes=\(kept)-")
        #expect(continued.status == 206)
        #expect(continued.bodyBytes == entity.count - kept)

        // The same with the server's name: -C -O finds the partial data by its URL.
        try server.put(entity, as: "named.bin")
        let named = relay.url("/files/named.bin").absoluteString
        try await killMidway(
            ["-O", "--output-dir", directory, named],
            partial: directory + "/named.bin.keyjar-part",
            bytes: 64 * 1024
        )
        let keptNamed = size(directory + "/named.bin.keyjar-part")
        let continuedNamed = try await keyjar.run(["fetch", "-C", "-O", "--output-dir", directory, named])
        #expect(continuedNamed.status == 0, "\(continuedNamed.error)")
        #expect(continuedNamed.error == "keyjar: saved \(directory)/named.bin.\n")
        #expect(FileManager.default.contents(atPath: directory + "/named.bin") == entity)
        let namedRequests = await server.requests(for: "/files/named.bin", atLeast: 2)
        #expect(namedRequests.first { $0.range != nil }?.range == "bytes=\(keptNamed)-")
    }

    @Test func anInterruptedDownloadSaysHowToContinueAndAChangedFileStartsOver() async throws {
        try server.put(Data(repeating: 7, count: 1 << 20), as: "report.bin")
        let url = relay.url("/files/report.bin").absoluteString
        let file = directory + "/report.bin"
        let timed = try await keyjar.run(["fetch", "-s", "--max-time", "1.5", "-o", file, url])
        #expect(timed.status == 1)
        #expect(timed.error.contains("--max-time 1.5 s."))
        #expect(timed.error.contains("The data so far is kept in \(file).keyjar-part; keyjar fetch -C"))
        #expect(contents() == ["report.bin.keyjar-part", "report.bin.keyjar-resume"])

        // Changed on the server meanwhile: If-Range fails, the whole new file comes.
        let changed = Data(repeating: 9, count: 200_000)
        try server.put(changed, as: "report.bin")
        let resumed = try await keyjar.run(["fetch", "-s", "-C", "-o", file, url])
        #expect(resumed.status == 0, "\(resumed.error)")
        #expect(FileManager.default.contents(atPath: file) == changed)
        #expect(contents() == ["report.bin"])
        let requests = await server.requests(for: "/files/report.bin", atLeast: 2)
        let second = try #require(requests.first { $0.range != nil })
        #expect(second.status == 200 && second.bodyBytes == changed.count)

        // -C with nothing to continue downloads from the start and says so.
        let fresh = try await keyjar.run([
            "fetch", "-C", "-o", directory + "/other.bin", server.url("/files/report.bin").absoluteString,
        ])
        #expect(fresh.status == 0)
        #expect(fresh.error == "keyjar: nothing to continue for this URL; downloading from the start.\n")
    }

    @Test func serverNamesAreUniqueUnlessOverwriting() async throws {
        let url = server.url("/disposition/quoted").absoluteString
        let first = try await keyjar.run(["fetch", "-O", "--output-dir", directory, url])
        #expect(first.status == 0 && first.output.isEmpty)
        #expect(first.error == "keyjar: saved \(directory)/report.pdf.\n")
        let second = try await keyjar.run(["fetch", "-O", "--output-dir", directory, url])
        #expect(second.error == "keyjar: saved \(directory)/report-1.pdf.\n")
        let replaced = try await keyjar.run(["fetch", "-s", "-O", "--overwrite", "--output-dir", directory, url])
        #expect(replaced.status == 0 && replaced.error.isEmpty)
        #expect(contents() == ["report-1.pdf", "report.pdf"])

        // -i with a file: the head on standard output, the body alone in the file.
        let headed = try await keyjar.run(["fetch", "-s", "-i", "-o", directory + "/headed", url])
        #expect(
            headed.output.hasPrefix("HTTP/1.1 200 OK\r\n") && headed.output.contains("Content-Disposition: attachment")
        )
        #expect(FileManager.default.contents(atPath: directory + "/headed") == Data("the disposition file\n".utf8))

        for (arguments, message) in [
            (["-O", "-o", "x", url], "-o and -O both name the file"),
            (["-C", url], "-C continues a download to a file"),
            (["--overwrite", "-o", "x", url], "--overwrite only applies with -O"),
            (["--output-dir", directory, url], "--output-dir only applies with -o or -O"),
        ] {
            let refused = try await keyjar.run(["fetch"] + arguments)
            #expect(refused.status == 2 && refused.error.contains(message), "\(arguments): \(refused.error)")
        }
        // A damaged record is a clear error, and nothing is touched.
        try Data("junk".utf8).write(to: URL(fileURLWithPath: directory + "/bad.bin.keyjar-resume"))
        try Data("partial".utf8).write(to: URL(fileURLWithPath: directory + "/bad.bin.keyjar-part"))
        let damaged = try await keyjar.run(["fetch", "-C", "-o", directory + "/bad.bin", url])
        #expect(damaged.status == 1)
        #expect(
            damaged.error.hasPrefix(
                "keyjar: The resume data cannot be used: \(directory)/bad.bin.keyjar-resume: it is not Keyjar's resume data"
            ),
            "\(damaged.error)"
        )
        #expect(damaged.error.hasSuffix("Remove it to download from the start.\n"))
        #expect(FileManager.default.contents(atPath: directory + "/bad.bin.keyjar-part") == Data("partial".utf8))
        #expect(!FileManager.default.fileExists(atPath: directory + "/bad.bin"))

        let missing = try await keyjar.run(["fetch", "-O", "--output-dir", directory + "/nowhere", url])
        #expect(missing.status == 1 && missing.error.contains("is not a directory"))
    }
}
