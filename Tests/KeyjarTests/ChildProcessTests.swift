import Foundation
import Glibc
import KeyjarTestSupport
import Testing

/// The suite's own launcher (`ChildProcess`): what a child inherits, how its end is reported, and
/// that nothing of a runner that ended lives on in its group.
@Suite struct ChildProcessTests {
    /// Runs `command` through sh and returns its standard output.
    private func output(of command: String, group: ChildGroup = .shared) async throws -> (ChildProcess, String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        process.group = group
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = try await onOwnThread {
            String(decoding: DescriptorIO.readToEnd(output.fileHandleForReading), as: UTF8.self)
        }
        try await waitForExit(process)
        return (process, text)
    }

    /// Only descriptors 0, 1 and 2, even while the runner holds one open without close-on-exec;
    /// standard input is /dev/null when not given.
    @Test func aChildInheritsOnlyItsStandardStreams() async throws {
        let held = open("/dev/null", O_RDONLY)
        #expect(held > 2)
        defer { close(held) }
        // ls lists its own directory descriptor (3) besides what it inherited.
        let (_, listing) = try await output(of: "ls /proc/self/fd")
        #expect(listing.split(separator: "\n") == ["0", "1", "2", "3"])
        let (_, input) = try await output(of: "readlink /proc/self/fd/0")
        #expect(input == "/dev/null\n")
    }

    /// Nothing blocked and nothing ignored, whatever the spawning thread blocks.
    @Test func aChildStartsWithDefaultSignals() async throws {
        let status = try await onOwnThread {
            var blocked = sigset_t()
            sigemptyset(&blocked)
            sigaddset(&blocked, SIGTERM)
            pthread_sigmask(SIG_BLOCK, &blocked, nil)
            let process = ChildProcess()
            process.executableURL = URL(fileURLWithPath: "/bin/grep")
            process.arguments = ["-E", "^Sig(Blk|Ign)", "/proc/self/status"]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            return String(decoding: DescriptorIO.readToEnd(output.fileHandleForReading), as: UTF8.self)
        }
        // Signals 1 to 31 (bits 0 to 30); glibc keeps 32 and 33 for itself.
        let masks = status.split(separator: "\n").map { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
        #expect(masks.count == 2)
        for mask in masks { #expect(mask.map { $0 & 0x7FFF_FFFF } == 0, "\(status)") }
    }

    /// An exit status, a signal, and the handler called once with the process ended.
    @Test func theEndIsReportedAsFoundationReportsIt() async throws {
        let (exited, _) = try await output(of: "exit 7")
        #expect(exited.terminationReason == .exit)
        #expect(exited.terminationStatus == 7)
        #expect(!exited.isRunning)

        let calls = TestSemaphore()
        let killed = ChildProcess()
        killed.executableURL = URL(fileURLWithPath: "/bin/sleep")
        killed.arguments = ["1000"]
        killed.terminationHandler = { process in
            #expect(!process.isRunning)
            calls.signal()
        }
        try killed.run()
        #expect(killed.isRunning)
        kill(killed.processIdentifier, SIGKILL)
        #expect(await calls.wait())
        try await waitForExit(killed)
        #expect(killed.terminationReason == .uncaughtSignal)
        #expect(killed.terminationStatus == SIGKILL)
    }

    /// What happens when the test runner exits or crashes: its group's guard sees the end of its
    /// input and kills every process still in the group.
    @Test func theGroupsProcessesEndWithIt() async throws {
        let group = ChildGroup()
        let sleeper = ChildProcess()
        sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sleeper.arguments = ["1000"]
        sleeper.group = group
        try sleeper.run()
        let (_, groupOfShell) = try await output(of: "ps -o pgid= -p $$", group: group)
        #expect(
            getpgid(sleeper.processIdentifier) == Int32(groupOfShell.trimmingCharacters(in: .whitespacesAndNewlines))
        )
        #expect(getpgid(sleeper.processIdentifier) != getpgrp())

        try await group.end()
        try await waitForExit(sleeper)
        #expect(sleeper.terminationReason == .uncaughtSignal)
        #expect(sleeper.terminationStatus == SIGKILL)
    }
}
