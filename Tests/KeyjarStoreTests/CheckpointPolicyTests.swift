import Foundation
import KeyjarCore
import KeyjarStore
import Testing

/// The checkpoint rule as a value, then applied to a real database.
struct CheckpointPolicyTests {
    let policy = CheckpointPolicy()

    @Test func aLongWALIsRestartedAndAnIdleLargeOneTruncated() {
        // While writing: passive, with a restart once the WAL is long
        #expect(
            policy.plan(walFrames: 10, walFileBytes: 1 << 30, sinceLastCommit: 1_000)
                == .passive(restartWhenClose: false)
        )
        #expect(
            policy.plan(walFrames: 16_384, walFileBytes: 64 << 20, sinceLastCommit: 0)
                == .passive(restartWhenClose: true)
        )
        // After a pause: a large file is truncated, a small one is left alone
        #expect(policy.plan(walFrames: 0, walFileBytes: 5 << 20, sinceLastCommit: 2_000_000_000) == .truncate)
        #expect(
            policy.plan(walFrames: 0, walFileBytes: 1 << 20, sinceLastCommit: 2_000_000_000)
                == .passive(restartWhenClose: false)
        )
        #expect(!policy.startsAtOnce(walFrames: 16_383) && policy.startsAtOnce(walFrames: 16_384))
    }

    @Test func aDatabaseFollowsThePlanAndEmptiesAnIdleWAL() async throws {
        // Given a database whose WAL holds a few hundred commits, and a policy that truncates
        // anything over 1 byte after 1 ms of quiet
        let directory = try TemporaryDirectory()
        let database = try StoreDatabase(path: directory.path("store.sqlite3"))
        for index in 0..<200 {
            try database.commit([.cookies([.added(Cookie(name: "c\(index)", value: "v", domain: "example.com"))])])
        }
        #expect(database.walFileBytes > 0)
        var quick = CheckpointPolicy()
        quick.walBytesKeptWhenIdle = 1
        quick.idleNanoseconds = 1_000_000
        // When writing has paused and the policy runs
        try await Task.sleep(for: .milliseconds(10))
        #expect(try database.checkpoint(following: quick) == .truncate)
        // Then the WAL file is empty and the data all in the database
        #expect(database.walFileBytes == 0)
        #expect(try database.loadSnapshot().cookies.count == 200)
        #expect(!database.isCheckpointRunning)
    }
}
