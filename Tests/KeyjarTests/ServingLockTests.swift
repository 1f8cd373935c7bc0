import Foundation
import Glibc
import KeyjarTestSupport
import Testing

@testable import KeyjarConnection

/// Who holds keyjard's serving lock, as a client that auto-starts keyjard asks it: read from the
/// kernel's lock table, which on a busy system has hundreds of lines.
@Suite struct ServingLockTests {
    /// The lock is found among 800 others taken before and after it (the table's order is the
    /// kernel's), and not found once released.
    @Test func theHolderIsFoundAmongHundredsOfLocks() throws {
        let directory = try TemporaryDirectory()
        var held: [Int32] = []
        defer { for descriptor in held { close(descriptor) } }
        func lockAnother(_ name: String) throws {
            let descriptor = open(directory.path(name), O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard descriptor >= 0, flock(descriptor, LOCK_EX | LOCK_NB) == 0 else {
                throw TestSupportError("cannot lock \(name): \(String(cString: strerror(errno)))")
            }
            held.append(descriptor)
        }
        for index in 0..<400 { try lockAnother("before-\(index)") }
        let path = directory.path("keyjard.lock")
        let serving = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        #expect(serving >= 0)
        #expect(flock(serving, LOCK_EX | LOCK_NB) == 0)
        for index in 0..<400 { try lockAnother("after-\(index)") }

        let table = try #require(ServingLock.kernelTable("/proc/locks"))
        #expect(table.split(separator: "\n").count > 800)
        #expect(ServingLock.holder(of: path) == getpid())
        close(serving)
        #expect(ServingLock.holder(of: path) == nil)
    }
}
