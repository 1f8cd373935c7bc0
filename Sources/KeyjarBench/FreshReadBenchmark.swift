import CoreFoundation  // struct timespec's members resolve there once libcrypto's headers are in the build
import Foundation
import Glibc
import Keyjar
import KeyjarProtocol

/// Reads after another process's acknowledged write: stale reads, the catch-up's
/// cost against a bare round trip, and what a process that does not listen pays per foreign
/// change.
func runFreshReadBenchmark(socketPath: String) throws {
    let configuration = KeyjarClient.Configuration(socketPath: socketPath, autoStart: false)
    let writer = SharedCookieStorage(client: try KeyjarClient(configuration: configuration))
    let reader = SharedCookieStorage(client: try KeyjarClient(configuration: configuration))
    guard let url = URL(string: "https://fresh.test/") else { throw BenchmarkError("bad URL") }

    // A lookup right after another connection's change (the catch-up: one request, the event
    // decoded and applied), against one round trip on that connection of the same request
    // with nothing to catch up (a `follow` from the sequence it has).
    var catchUps: [UInt64] = []
    var roundTrips: [UInt64] = []
    for index in 0..<2_500 {
        _ = try writer.storeCookies(fromResponseHeaders: ["f=\(index)"], for: url, mainDocumentURL: nil)
        var start = nanoseconds()
        let header = reader.cookieHeader(for: url)
        let caughtUp = nanoseconds() - start
        guard header == "f=\(index)" else { throw BenchmarkError("a stale lookup: \(header ?? "none")") }
        start = nanoseconds()
        _ = try reader.client.call(.follow(after: reader.client.sequence))
        let roundTrip = nanoseconds() - start
        if index >= 500 {
            catchUps.append(caughtUp)
            roundTrips.append(roundTrip)
        }
    }
    report("client_lookup_after_foreign_change", samples: catchUps)
    report("client_round_trip", samples: roundTrips)
    printRatio("client_lookup_after_foreign_change_to_round_trip", catchUps, roundTrips)

    // Another process reads after each acknowledged write, told through a pipe.
    for listening in [false, true] {
        let peer = try LookupPeer(socketPath: socketPath, url: url, listening: listening)
        var stale = 0
        for index in 0..<1_000 {
            _ = try writer.storeCookies(fromResponseHeaders: ["f=p\(index)"], for: url, mainDocumentURL: nil)
            if try peer.ask("lookup") != "f=p\(index)" { stale += 1 }
        }
        print("client_stale_reads_after_ack\(listening ? "_listening" : ""): \(stale) of 1000")
        if !listening {
            // What the same process pays while 1,000 changes go by without it looking.
            let before = try peer.cpu()
            for index in 0..<1_000 {
                _ = try writer.storeCookies(fromResponseHeaders: ["f=q\(index)"], for: url, mainDocumentURL: nil)
            }
            let spent = try peer.cpu() - before
            print("client_not_listening_cpu_per_foreign_change: \(spent / 1_000) ns")
        }
        peer.finish()
    }
}

private func printRatio(_ name: String, _ samples: [UInt64], _ reference: [UInt64]) {
    let ratio = Double(percentile(samples.sorted(), 0.5)) / Double(max(1, percentile(reference.sorted(), 0.5)))
    print("\(name)_ratio: \(String(format: "%.2f", ratio))")
}

/// Another process with a replica (`keyjar-bench client-lookup-peer <socket> <url> quiet|listen`):
/// says "ready", then answers each line: `lookup` with the Cookie header for the URL, `cpu`
/// with its CPU time so far in nanoseconds.
final class LookupPeer {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    init(socketPath: String, url: URL, listening: Bool) throws {
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["client-lookup-peer", socketPath, url.absoluteString, listening ? "listen" : "quiet"]
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        guard try readLine() == "ready" else { throw BenchmarkError("a lookup peer did not start") }
    }

    func ask(_ question: String) throws -> String {
        try? input.fileHandleForWriting.write(contentsOf: Data((question + "\n").utf8))
        return try readLine()
    }

    func cpu() throws -> UInt64 {
        let answer = try ask("cpu")
        guard let value = UInt64(answer) else { throw BenchmarkError("a lookup peer answered \(answer)") }
        return value
    }

    func finish() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    private func readLine() throws -> String {
        var line: [UInt8] = []
        var byte: UInt8 = 0
        let descriptor = output.fileHandleForReading.fileDescriptor
        while read(descriptor, &byte, 1) == 1 {
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        throw BenchmarkError("a lookup peer ended")
    }
}

/// The peer process's side (see ``LookupPeer``).
func runLookupPeer(socketPath: String, url: String, listening: Bool) -> Never {
    do {
        guard let url = URL(string: url) else { throw BenchmarkError("bad URL") }
        let storage = SharedCookieStorage(
            client: try KeyjarClient(configuration: .init(socketPath: socketPath, autoStart: false))
        )
        if listening { storage.client.startPostingNotifications() }
        try? FileHandle.standardOutput.write(contentsOf: Data("ready\n".utf8))
        while let line = readLine() {
            let answer = line == "cpu" ? String(processCPUNanoseconds()) : storage.cookieHeader(for: url) ?? ""
            try? FileHandle.standardOutput.write(contentsOf: Data((answer + "\n").utf8))
        }
        exit(0)
    } catch {
        try? FileHandle.standardError.write(contentsOf: Data("client-lookup-peer: \(error)\n".utf8))
        exit(1)
    }
}

/// `scripts/fanout-floor.c processes`, compiled and run in the same invocation as the fan-out
/// it is the floor of.
struct FanoutFloor {
    var medianAll: Double
    var medianMiddle: Double
    var subscriberCPU: Double

    static func measure(spacingMicroseconds: Int) throws -> FanoutFloor {
        let floor = try ScriptProgram("fanout-floor.c", linking: "-pthread")
        let text = try floor.run(["processes", String(spacingMicroseconds)])
        // The floor prints "…: median N us, p99 … each subscriber N us" and "middle place #49:
        // median N us".
        func number(after marker: String) -> Double? { ScriptProgram.number(after: marker, in: text) }
        guard let all = number(after: "median "), let middle = number(after: "(the middle): median "),
            let cpu = number(after: "each subscriber ")
        else { throw BenchmarkError("unexpected output from the fan-out floor: \(text)") }
        return FanoutFloor(medianAll: all * 1_000, medianMiddle: middle * 1_000, subscriberCPU: cpu * 1_000)
    }
}
