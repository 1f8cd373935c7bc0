import NIOCore
import Testing

@testable import KeyjarServer

/// How often keyjard logs a failing database (a full disk fails every write), without any I/O.
struct StorageFailureLogTests {
    @Test func theFirstFailureOfASecondIsLoggedWithTheCountOfThoseThatWereNot() {
        var log = StorageFailureLog()
        let start = NIODeadline.uptimeNanoseconds(5_000_000_000)
        #expect(log.failure(at: start) == 0)
        for step in 1...99 {
            #expect(log.failure(at: start + .milliseconds(Int64(step * 10))) == nil)
        }
        #expect(log.failure(at: start + StorageFailureLog.interval) == 99)
        #expect(log.failure(at: start + StorageFailureLog.interval + .milliseconds(1)) == nil)
        #expect(log.failure(at: start + StorageFailureLog.interval * 3) == 1)
    }
}
