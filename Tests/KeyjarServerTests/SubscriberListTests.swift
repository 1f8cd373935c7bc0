import KeyjarTestSupport
import Testing

@testable import KeyjarServer

/// keyjard tells its subscribers of a change oldest connection first, whatever the order in
/// which they subscribed, left and came back.
struct SubscriberListTests {
    final class Connection: IdentifiedConnection {
        let id: UInt64
        init(_ id: UInt64) { self.id = id }
    }

    @Test func clientsComeOutOldestConnectionFirst() {
        var random = SplitMix64(state: 9)
        var list = SubscriberList<Connection>()
        var expected = Set<UInt64>()
        for _ in 0..<2_000 {
            let id = UInt64.random(in: 1...300, using: &random)
            if Bool.random(using: &random) {
                list.insert(Connection(id))
                expected.insert(id)
            } else {
                list.remove(id: id)
                expected.remove(id)
            }
            #expect(list.clients.map(\.id) == expected.sorted())
            #expect(list.count == expected.count)
            #expect((list[id] != nil) == expected.contains(id))
        }
    }

    @Test func subscribingAgainReplacesTheEntryInItsPlace() {
        var list = SubscriberList<Connection>()
        for id: UInt64 in [5, 1, 9] { list.insert(Connection(id)) }
        let again = Connection(5)
        list.insert(again)
        #expect(list.clients.map(\.id) == [1, 5, 9])
        #expect(list[5] === again)
        list.removeAll()
        #expect(list.count == 0 && list[1] == nil)
    }
}
