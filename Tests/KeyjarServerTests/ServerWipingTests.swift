import Foundation
import Glibc
import KeyjarCore
import KeyjarProtocol
import KeyjarTestSupport
import Testing

/// keyjard lets go of no memory holding a frame that carried a password without zeroing it:
/// its whole memory is searched (through /proc) for the password as it appears in a frame.
/// The decoded password itself (a Swift string, and what libsecret copies) is not Keyjar's to
/// wipe (SECURITY.md); the frames are.
@Suite(.timeLimit(testTimeLimit))
struct ServerWipingTests {
    @Test func keyjardKeepsNoFrameThatCarriedAPassword() throws {
        let secrets = try PrivateSecretService()
        let daemon = try DaemonProcess(environment: secrets.environment)
        defer { #expect(daemon.stop() == 0) }
        let client = try TestClient(socketPath: daemon.socketPath)
        let secret = "pw-\(UInt64.random(in: 1_000_000_000...9_999_999_999))-wiped"
        // A long one too: its frame is over 64 KiB, so it takes the large-frame path (a buffer
        // reserved and allocated whole).
        let long = secret + String(repeating: "x", count: 100_000)
        let space = ProtectionSpace(host: "wipe.example", protocol: "https")
        for (user, password) in [("alice", secret), ("bob", long), ("carol", secret)] {
            let stored = try client.call(.setCredential(space: space, user: user, password: password, makeDefault: false))
            guard case .committed = stored else { throw TestSupportError("set \(user): \(stored)") }
            let read = try client.call(.password(space: space, user: user))
            guard case .password(let returned?) = read, returned == password else { throw TestSupportError("read \(user)") }
        }
        // One more round trip: whatever was let go of on the previous turns of the loop is wiped.
        _ = try client.call(.status)

        let memory = try ProcessMemory(pid: daemon.pid)
        // The scan finds what is there: keyjard holds its database path.
        #expect(memory.count(of: Array(daemon.databasePath.utf8)) > 0)
        // No frame with the password, in a request or a reply.
        #expect(memory.count(of: Array(#""password":"\#(secret)"#.utf8)) == 0)
    }
}

/// A snapshot of another process's readable private memory, read from /proc/PID/mem (allowed
/// for a child process: it is ours to trace).
private struct ProcessMemory {
    private var regions: [[UInt8]] = []

    init(pid: Int32) throws {
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        let descriptor = open("/proc/\(pid)/mem", O_RDONLY)
        guard descriptor >= 0 else { throw TestSupportError("cannot open /proc/\(pid)/mem: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // Writable private memory: the heap, anonymous mappings, stacks.
            guard fields.count >= 2, fields[1].hasPrefix("rw"), fields.count < 6 || !fields[5].hasPrefix("/") || fields[5] == "[heap]"
            else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0] else { continue }
            var bytes = [UInt8](repeating: 0, count: Int(bounds[1] - bounds[0]))
            let read = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, off_t(bounds[0])) }
            if read > 0 { regions.append(Array(bytes.prefix(read))) }
        }
        guard !regions.isEmpty else { throw TestSupportError("no readable memory in /proc/\(pid)/mem") }
    }

    func count(of pattern: [UInt8]) -> Int {
        guard let first = pattern.first else { return 0 }
        var found = 0
        for region in regions {
            region.withUnsafeBytes { bytes in
                pattern.withUnsafeBytes { needle in
                    var offset = 0
                    // memchr for the first byte, then the rest compared (memmem is a GNU
                    // extension Glibc's module does not export).
                    while bytes.count - offset >= needle.count,
                        let hit = memchr(bytes.baseAddress! + offset, Int32(first), bytes.count - offset - needle.count + 1)
                    {
                        let position = hit - UnsafeMutableRawPointer(mutating: bytes.baseAddress!)
                        if memcmp(hit, needle.baseAddress!, needle.count) == 0 { found += 1 }
                        offset = position + 1
                    }
                }
            }
        }
        return found
    }
}
