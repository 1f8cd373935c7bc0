import KeyjarTestSupport
import Testing

@testable import KeyjarServer

/// What keyjard counts as sent and not yet taken by a client's socket, without a promise per
/// write: settled against the bytes the channel still buffers, it is exactly the messages not
/// wholly written; between settlements it is never below that, and a decision taken on it
/// without settling is the one the exact count gives.
struct OutboundBacklogTests {
    /// A socket taking a random number of bytes at a time from messages sent in order.
    struct Channel {
        var sizes: [Int] = []
        var taken = 0

        var sent: Int { sizes.reduce(0, +) }
        var buffered: Int { sent - taken }
        /// The messages not wholly written, and their bytes.
        var pending: (messages: Int, bytes: Int) {
            var start = 0
            var index = 0
            while index < sizes.count, start + sizes[index] <= taken {
                start += sizes[index]
                index += 1
            }
            return (sizes.count - index, sizes[index...].reduce(0, +))
        }
    }

    /// Tight limits (a client often near them) and keyjard's defaults (a client that keeps up,
    /// settled every `settlingInterval` messages).
    static let limitSets = [
        ServedClient.Limits(messages: 64, bytes: 40_000, backlogBytes: 20_000),
        ServedClient.Limits(messages: 4_096, bytes: 16 << 20, backlogBytes: 1 << 20),
    ]

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64], [0, 1])
    func settledCountsAreExactAndDecisionsNeedNoSettlingOtherwise(seed: UInt64, limitSet: Int) {
        var random = SplitMix64(state: seed)
        let limits = Self.limitSets[limitSet]
        var channel = Channel()
        var backlog = OutboundBacklog()
        var settlements = 0
        for _ in 0..<20_000 {
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<5:
                let size = Int.random(in: 4...2_000, using: &random)
                let exact = channel.pending
                if !backlog.needsSettling(adding: size, limits: limits) {
                    // The unsettled counts decide as the exact ones would.
                    let admitsExactly =
                        exact.messages == 0
                        || (exact.messages < limits.messages && exact.bytes + size <= limits.bytes)
                    #expect(backlog.admits(size, limits: limits) == admitsExactly)
                    let behindExactly =
                        exact.bytes + size > limits.backlogBytes || exact.messages + 1 > limits.messages / 2
                    #expect(!behindExactly)
                } else {
                    backlog.settle(buffered: channel.buffered)
                    settlements += 1
                }
                guard backlog.admits(size, limits: limits) else {
                    // Refused: the socket drains before the next try, as a reader catching up.
                    channel.taken = channel.sent
                    continue
                }
                backlog.append(size)
                channel.sizes.append(size)
            case 5..<9:
                channel.taken += Int.random(in: 0...min(channel.buffered, 5_000), using: &random)
            default:
                backlog.settle(buffered: channel.buffered)
                settlements += 1
                let exact = channel.pending
                #expect(backlog.messages == exact.messages)
                #expect(backlog.bytes == exact.bytes)
            }
            // Never below the truth, and never far above it for long.
            #expect(backlog.messages <= OutboundBacklog.settlingInterval + 1)
            #expect(backlog.messages >= channel.pending.messages)
            #expect(backlog.bytes >= channel.pending.bytes)
            if channel.sizes.count > 4_096, channel.buffered == 0 {
                channel = Channel()
                backlog.settle(buffered: 0)
                #expect(backlog.isEmpty)
            }
        }
        #expect(settlements > 100)
    }

    /// A subscriber that takes everything at once, under keyjard's default limits: what is kept
    /// for it stays a few dozen sizes, as `ServedClient.send` settles (512 connections may
    /// each keep theirs).
    @Test func aClientThatKeepsUpHoldsFewSizes() {
        let limits = Self.limitSets[1]
        var backlog = OutboundBacklog()
        var largest = 0
        for _ in 0..<10_000 {
            if backlog.needsSettling(adding: 300, limits: limits) { backlog.settle(buffered: 0) }
            #expect(backlog.admits(300, limits: limits))
            backlog.append(300)
            largest = max(largest, backlog.messages)
        }
        #expect(largest <= OutboundBacklog.settlingInterval + 1)
    }

    @Test func aPartlyWrittenMessageStaysCountedWhole() {
        var backlog = OutboundBacklog()
        for size in [100, 200, 300] { backlog.append(size) }
        // 150 of the second message's 200 bytes written: 50 + 300 still buffered.
        backlog.settle(buffered: 350)
        #expect(backlog.messages == 2)
        #expect(backlog.bytes == 500)
        backlog.settle(buffered: 300)
        #expect(backlog.messages == 1)
        #expect(backlog.bytes == 300)
        backlog.settle(buffered: 0)
        #expect(backlog.isEmpty)
        #expect(backlog.bytes == 0)
    }

    @Test func thousandsOfWrittenMessagesAreLetGoOf() {
        var backlog = OutboundBacklog()
        for round in 1...50 {
            for _ in 0..<1_000 { backlog.append(10) }
            // All but the newest ten written.
            backlog.settle(buffered: 100)
            #expect(backlog.messages == 10, "round \(round)")
            #expect(backlog.bytes == 100)
        }
        backlog.append(7)
        backlog.settle(buffered: 7)
        #expect(backlog.messages == 1)
        #expect(backlog.bytes == 7)
    }
}
