import Foundation
import Glibc
import KeyjarPlatform
import KeyjarTestSupport
import Synchronization
import Testing

/// Starting a program by Keyjar's one rule (`ProcessSpawn`): its streams, the descriptors it
/// keeps, its signals, its session and how its end is reported.
struct ProcessSpawnTests {
    /// Runs `script` through sh with `options`, its standard output to a file; returns how it
    /// ended and what it wrote.
    private func run(_ script: String, _ options: ProcessSpawn.Options = .init()) throws -> (ProcessSpawn.Exit, String)
    {
        let directory = try TemporaryDirectory()
        let output = directory.path("output")
        var options = options
        options.standardOutput = .file(output, flags: O_WRONLY | O_CREAT | O_TRUNC)
        let pid = try ProcessSpawn.start(["/bin/sh", "-c", script], options)
        let exit = ProcessSpawn.wait(pid)
        return (exit, try String(contentsOfFile: output, encoding: .utf8))
    }

    @Test func aChildKeepsOnlyItsStreamsWhenAskedAndStartsWithDefaultSignals() throws {
        let held = open("/dev/null", O_RDONLY)
        #expect(held > 2)
        defer { close(held) }
        var options = ProcessSpawn.Options(standardInput: .null, standardError: .null)
        options.closesInheritedDescriptors = true
        options.newSession = true
        // ls lists its own directory descriptor (3) besides what it kept.
        let (exit, listing) = try run(
            "ls /proc/self/fd; grep -E '^Sig(Blk|Ign)' /proc/self/status; ps -o sid= -p $$",
            options
        )
        #expect(exit.status == 0 && !exit.wasSignalled)
        let lines = listing.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(Array(lines.prefix(4)) == ["0", "1", "2", "3"])
        #expect(lines.contains("SigBlk:\t0000000000000000"))
        // The standard signals (1–31) not ignored; glibc keeps two of its own real-time ones.
        let ignored = lines.first { $0.hasPrefix("SigIgn:") }.flatMap {
            UInt64($0.dropFirst(7).trimmingCharacters(in: .whitespaces), radix: 16)
        }
        #expect(ignored.map { $0 & 0x7FFF_FFFF } == 0)
        // In a session of its own: the shell leads it.
        #expect(lines.last.flatMap { pid_t($0) } != getsid(0))
        // Without being asked, the descriptor is inherited
        let (_, inherited) = try run("ls /proc/self/fd")
        #expect(inherited.split(separator: "\n").contains("\(held)"))
    }

    /// Another thread opening descriptors (without close-on-exec) while children start: none of
    /// them may reach a child that was to keep only its streams.
    @Test func aDescriptorOpenedMeanwhileByAnotherThreadIsNotInherited() throws {
        let stop = Atomic<Bool>(false)
        let opener = Thread {
            while !stop.load(ordering: .relaxed) {
                var descriptors: [Int32] = []
                for _ in 0..<32 { descriptors.append(open("/dev/null", O_RDONLY)) }
                for descriptor in descriptors { close(descriptor) }
            }
        }
        opener.start()
        defer { stop.store(true, ordering: .relaxed) }
        var options = ProcessSpawn.Options(standardInput: .null, standardError: .null)
        options.closesInheritedDescriptors = true
        for _ in 0..<50 {
            let (exit, listing) = try run("ls /proc/self/fd", options)
            #expect(exit.status == 0)
            #expect(listing.split(separator: "\n").sorted() == ["0", "1", "2", "3"])
        }
    }

    @Test func itsEndIsItsStatusOrTheSignalThatEndedIt() throws {
        #expect(try run("exit 3").0.status == 3)
        let (killed, _) = try run("kill -TERM $$")
        #expect(killed.wasSignalled && killed.status == 128 + SIGTERM)
    }

    @Test func anEnvironmentGivenIsTheWholeEnvironment() throws {
        let (_, printed) = try run("env", ProcessSpawn.Options(environment: ["ONLY": "this"]))
        #expect(
            printed.split(separator: "\n").filter {
                !$0.hasPrefix("PWD=") && !$0.hasPrefix("SHLVL=") && $0 != "_=/usr/bin/env"
            } == ["ONLY=this"]
        )
    }

    @Test func aProgramThatCannotStartIsAnErrorNamingIt() {
        #expect {
            _ = try ProcessSpawn.start(["/nonexistent/keyjard"])
        } throws: { error in
            "\(error)".contains("cannot start /nonexistent/keyjard") && "\(error)".contains("No such file")
        }
    }

    /// The suite's servers check that the port they accept on is theirs (`spawnOnFreePort`).
    @Test func aLoopbackListenerIsFoundInTheProcessThatHoldsItOnly() async throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && listen(listener, 1) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        #expect(listening)
        let port = Int(UInt16(bigEndian: address.sin_port))
        #expect(listensOnLoopback(port, processOrChildOf: getpid()))
        var options = ProcessSpawn.Options(standardInput: .null)
        options.closesInheritedDescriptors = true
        let other = try ProcessSpawn.start(["/bin/sleep", "30"], options)
        defer {
            kill(other, SIGKILL)
            _ = ProcessSpawn.wait(other)
        }
        #expect(!listensOnLoopback(port, processOrChildOf: other))
    }
}
