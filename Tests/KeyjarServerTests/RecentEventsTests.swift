import NIOCore
import Testing

@testable import KeyjarServer

/// The ring of recent events answers a catch-up only when it holds every event after it.
struct RecentEventsTests {
    static func frame(_ size: Int) -> ByteBuffer { ByteBuffer(repeating: 0, count: size) }

    @Test func holdsEveryEventAfterWhatItCoversAndDropsTheOldestPastItsBudget() {
        var ring = RecentEvents(latest: 10, byteLimit: 1_200)
        // Nothing committed yet: a replica at 10 has everything, one at 9 needs the log.
        #expect(ring.frames(after: 10)?.isEmpty == true)
        #expect(ring.frames(after: 9) == nil)
        // Sequence numbers need not be consecutive.
        for sequence in [11, 12, 14, 15] as [UInt64] { ring.append(sequence: sequence, frame: Self.frame(300)) }
        #expect(ring.frames(after: 10)?.map(\.sequence) == [11, 12, 14, 15])
        #expect(ring.frames(after: 12)?.map(\.sequence) == [14, 15])
        #expect(ring.frames(after: 13)?.map(\.sequence) == [14, 15])
        #expect(ring.frames(after: 15)?.isEmpty == true)
        // Over 1,200 bytes: the oldest goes, and with it what the ring can answer for.
        ring.append(sequence: 16, frame: Self.frame(300))
        #expect(ring.coversAfter == 11)
        #expect(ring.frames(after: 10) == nil)
        #expect(ring.frames(after: 11)?.map(\.sequence) == [12, 14, 15, 16])
        // A frame larger than the whole budget (2,000 bytes) leaves nothing held, and says so.
        ring.append(sequence: 17, frame: Self.frame(2_000))
        #expect(ring.coversAfter == 17 && ring.frames(after: 16) == nil)
        #expect(ring.frames(after: 17)?.isEmpty == true)
    }

    @Test func manyEventsKeepTheRightWindow() {
        var ring = RecentEvents(latest: 0, byteLimit: 100 * 10)
        for sequence in 1...10_000 as ClosedRange<UInt64> { ring.append(sequence: sequence, frame: Self.frame(10)) }
        #expect(ring.coversAfter == 9_900)
        #expect(ring.frames(after: 9_899) == nil)
        #expect(ring.frames(after: 9_900)?.map(\.sequence) == Array(9_901...10_000))
        ring.reset(latest: 10_000)
        #expect(ring.frames(after: 9_999) == nil && ring.frames(after: 10_000)?.isEmpty == true)
    }
}
