import Foundation
import Glibc
import Keyjar
import KeyjarCore
import KeyjarProtocol
import KeyjarTestSupport
import Testing

/// keyjard lets go of no memory holding a frame that carried a password without zeroing it:
/// its whole memory is searched (through /proc) for the password as it appears in a frame.
/// The decoded password itself (a Swift string, and what libsecret copies) is not Keyjar's to
/// wipe (SECURITY.md); the frames are.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct ServerWipingTests {
    /// Nothing as root; else keyjard in a user namespace of the test's own, whose owner has
    /// CAP_SYS_PTRACE in it.
    static let launcher: [String] = getuid() == 0 ? [] : ["/usr/bin/unshare", "--user", "--map-root-user"]

    static func canReadKeyjardsMemory() async -> Bool {
        if getuid() == 0 { return true }
        let probe = try? await runCommand(launcher[0], Array(launcher.dropFirst()) + ["/bin/true"])
        return probe?.status == 0
    }

    /// Under ThreadSanitizer keyjard's heap lies inside read-write mappings of terabytes, which
    /// cannot be read through (the control below then fails); the normal and AddressSanitizer
    /// runs scan it.
    @Test(
        .enabled(
            if: ProcessInfo.processInfo.environment["KEYJAR_SANITIZER"] != "thread",
            "ThreadSanitizer's heap is not scannable"
        ),
        // keyjard is not dumpable: only a process with CAP_SYS_PTRACE over it reads its memory,
        // root, or (not root) the owner of the user namespace it is started in.
        .enabled("needs root or a user namespace to read a non-dumpable keyjard's memory") {
            await Self.canReadKeyjardsMemory()
        }
    )
    func keyjardKeepsNoFrameThatCarriedAPassword() async throws {
        let secrets = try await PrivateSecretService()
        let daemon = try await DaemonProcess(environment: secrets.environment, launcher: Self.launcher)
        let client = try TestClient(socketPath: daemon.socketPath)
        let secret = "pw-\(UInt64.random(in: 1_000_000_000...9_999_999_999))-wiped"
        // A long one too: its frame is over 64 KiB, so it takes the large-frame path (a buffer
        // reserved and allocated whole).
        let long = secret + String(repeating: "x", count: 100_000)
        let space = ProtectionSpace(host: "wipe.example", protocol: "https")
        for (user, password) in [("alice", secret), ("bob", long), ("carol", secret)] {
            let stored = try client.call(
                .setCredential(space: space, user: user, password: password, makeDefault: false)
            )
            guard case .committed = stored else { throw TestSupportError("set \(user): \(stored)") }
            let read = try client.call(.password(space: space, user: user))
            guard case .password(let returned?) = read, returned == password else {
                throw TestSupportError("read \(user)")
            }
        }
        // One more round trip: whatever was let go of on the previous turns of the loop is wiped.
        _ = try client.call(.status)

        let memory = try ProcessMemory(pid: daemon.pid)
        // The scan finds what is there: keyjard holds its database path.
        #expect(try memory.count(of: Array(daemon.databasePath.utf8)) > 0)
        // No frame with the password, in a request or a reply.
        #expect(try memory.count(of: Array(#""password":"\#(secret)"#.utf8)) == 0)
    }
}

/// Another process's writable private memory, read from /proc/PID/mem (allowed to root: keyjard
/// is not dumpable, so not even its parent may otherwise), a chunk at a time. Mappings over 1 GiB are skipped: those are
/// sanitizers' reservations (AddressSanitizer's shadow; ThreadSanitizer's heap, see above).
private struct ProcessMemory {
    private let pid: Int32
    private var regions: [(start: UInt64, end: UInt64)] = []

    init(pid: Int32) throws {
        self.pid = pid
        let maps = try String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8)
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            // Writable private memory: the heap, anonymous mappings, stacks.
            guard fields.count >= 2, fields[1].hasPrefix("rw"),
                fields.count < 6 || !fields[5].hasPrefix("/") || fields[5] == "[heap]"
            else { continue }
            let bounds = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard bounds.count == 2, bounds[1] > bounds[0], bounds[1] - bounds[0] <= 1 << 30 else { continue }
            regions.append((bounds[0], bounds[1]))
        }
        guard !regions.isEmpty else { throw TestSupportError("no writable memory listed in /proc/\(pid)/maps") }
    }

    /// How many times `pattern` occurs (a match across two chunks included).
    func count(of pattern: [UInt8]) throws -> Int {
        let descriptor = open("/proc/\(pid)/mem", O_RDONLY)
        guard descriptor >= 0 else {
            throw TestSupportError("cannot open /proc/\(pid)/mem: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let chunkSize = 4 << 20
        var chunk = [UInt8](repeating: 0, count: chunkSize + pattern.count)
        var found = 0
        for region in regions {
            var offset = region.start
            var carried = 0
            while offset < region.end {
                let wanted = Int(min(UInt64(chunkSize), region.end - offset))
                let read = chunk.withUnsafeMutableBytes {
                    pread(descriptor, $0.baseAddress! + carried, wanted, off_t(offset))
                }
                guard read > 0 else { break }
                let valid = carried + read
                found += Self.occurrences(of: pattern, in: chunk, count: valid)
                // The last bytes go on, so a match split between chunks is seen once.
                carried = min(pattern.count - 1, valid)
                chunk.withUnsafeMutableBytes { bytes in
                    let base = bytes.baseAddress!
                    memmove(base, base + valid - carried, carried)
                }
                offset += UInt64(read)
            }
        }
        return found
    }

    private static func occurrences(of pattern: [UInt8], in bytes: [UInt8], count: Int) -> Int {
        guard let first = pattern.first, count >= pattern.count else { return 0 }
        var found = 0
        bytes.withUnsafeBytes { buffer in
            pattern.withUnsafeBytes { needle in
                let base = buffer.baseAddress!
                var offset = 0
                // memchr for the first byte, then the rest compared (memmem is a GNU extension
                // Glibc's module does not export).
                while count - offset >= needle.count,
                    let hit = memchr(base + offset, Int32(first), count - offset - needle.count + 1)
                {
                    if memcmp(hit, needle.baseAddress!, needle.count) == 0 { found += 1 }
                    offset = UnsafeRawPointer(hit) - base + 1
                }
            }
        }
        return found
    }
}
