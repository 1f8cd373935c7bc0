import NIOCore
import Testing

@testable import KeyjarServer

/// How keyjard's committed events wait for its subscribers, without a socket: one flush for
/// any number of events, each event for everybody but its writer, in order.
struct EventFanoutTests {
    final class Connection: IdentifiedConnection {
        let id: UInt64
        init(_ id: UInt64) { self.id = id }
    }

    private func frame(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

    /// Whether `fanout` asks for a flush now (a mutating call, which `#expect` cannot make).
    private func schedules(_ fanout: inout EventFanout<Connection>) -> Bool { fanout.schedulesFlush() }

    private func taken(_ fanout: inout EventFanout<Connection>) -> [EventFanout<Connection>.Pending] {
        fanout.takePending()
    }

    @Test func eventsWaitForOneFlushAndComeOutInOrderWithTheirWriter() {
        var fanout = EventFanout<Connection>()
        #expect(!schedules(&fanout), "nothing waits")
        fanout.queue(frame("first"), sentTo: 7)
        #expect(schedules(&fanout))
        fanout.queue(frame("second"), sentTo: nil)
        #expect(!schedules(&fanout), "one flush is scheduled already")
        let pending = taken(&fanout)
        #expect(pending.map { String(buffer: $0.frame) } == ["first", "second"])
        #expect(pending.map(\.sentTo) == [7, nil])
        #expect(taken(&fanout).isEmpty)
        #expect(!schedules(&fanout))
        fanout.queue(frame("third"), sentTo: nil)
        #expect(schedules(&fanout), "the flush ran: the next event schedules another")
    }

    @Test func anEventIsQueuedOnlyWhenSomebodyButItsWriterListens() {
        var fanout = EventFanout<Connection>()
        let writer = Connection(1)
        #expect(!fanout.othersListen(besides: nil))
        fanout.subscribe(writer)
        #expect(!fanout.othersListen(besides: writer))
        #expect(fanout.othersListen(besides: nil))
        fanout.subscribe(Connection(2))
        #expect(fanout.othersListen(besides: writer))
        fanout.unsubscribe(id: 2)
        #expect(!fanout.othersListen(besides: writer))
    }

    @Test func subscribersComeOutOldestConnectionFirstAndStoppingForgetsEverything() {
        var fanout = EventFanout<Connection>()
        for id: UInt64 in [9, 3, 5] { fanout.subscribe(Connection(id)) }
        #expect(fanout.subscribers.clients.map(\.id) == [3, 5, 9])
        fanout.queue(frame("event"), sentTo: nil)
        fanout.removeAll()
        #expect(fanout.subscribers.count == 0)
        #expect(taken(&fanout).isEmpty)
    }
}
