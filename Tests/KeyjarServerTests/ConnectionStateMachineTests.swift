import KeyjarProtocol
import Testing

@testable import KeyjarServer

/// The connection's rules without a socket: handshake, order, deferred answers, closing.
struct ConnectionStateMachineTests {
    static let hello = ClientMessage(id: 1, request: .hello(version: ProtocolVersion.current, client: "tool"))

    @Test func theFirstRequestMustBeAHelloOfThisVersion() {
        // Given a new connection, when its first request is not a hello
        var machine = ConnectionStateMachine()
        let received = machine.received(ClientMessage(id: 5, request: .status))
        // Then it is refused with handshakeRequired, and everything after it ignored
        guard case .fail(let id, let error) = received else {
            Issue.record("expected a failure, got \(received)")
            return
        }
        #expect(id == 5 && error.code == WireError.handshakeRequired)
        #expect(machine.state == .closing && machine.closesAtEndOfInput)
        #expect(machine.received(Self.hello) == .ignore)
        #expect(machine.nextRequest() == nil)

        var other = ConnectionStateMachine()
        let wrongVersion = other.received(
            ClientMessage(id: 1, request: .hello(version: ProtocolVersion.current + 1, client: "x"))
        )
        guard case .fail(_, let versionError) = wrongVersion else {
            Issue.record("expected a failure, got \(wrongVersion)")
            return
        }
        #expect(versionError.code == WireError.unsupportedVersion)
    }

    /// The hello deadline closes a connection still waiting for its hello, and nothing else.
    @Test func theHelloDeadlineClosesOnlyAConnectionWithoutHello() {
        var waiting = ConnectionStateMachine()
        guard case .fail(nil, let error) = waiting.helloDeadlinePassed(after: 10) else {
            Issue.record("a connection without hello was kept")
            return
        }
        #expect(error.code == WireError.handshakeRequired && error.message == "no hello within 10 s of connecting")
        #expect(waiting.state == .closing && waiting.received(Self.hello) == .ignore)

        var greeted = ConnectionStateMachine()
        #expect(greeted.received(Self.hello) == .queued(greeting: "tool"))
        #expect(greeted.helloDeadlinePassed(after: 10) == .ignore && greeted.state == .ready)
        #expect(greeted.nextRequest() == Self.hello)

        var closing = ConnectionStateMachine()
        _ = closing.malformed(WireError(code: WireError.malformedFrame, message: "x"))
        #expect(closing.helloDeadlinePassed(after: 10) == .ignore)
    }

    @Test func requestsAreTakenInOrderAndOneDeferredAnswerHoldsTheRest() {
        var machine = ConnectionStateMachine()
        // Given a greeted connection with three requests queued
        #expect(machine.received(Self.hello) == .queued(greeting: "tool"))
        #expect(machine.nextRequest() == Self.hello)
        for id: UInt64 in 2...4 {
            #expect(machine.received(ClientMessage(id: id, request: .status)) == .queued(greeting: nil))
        }
        #expect(!machine.closesAtEndOfInput)
        // When the first is answered elsewhere (the Secret Service)
        #expect(machine.nextRequest()?.id == 2)
        machine.answerDeferred()
        // Then the others wait, even ones arriving meanwhile, until its answer is sent
        #expect(machine.isAnswering)
        #expect(machine.received(ClientMessage(id: 5, request: .status)) == .queued(greeting: nil))
        #expect(machine.nextRequest() == nil)
        #expect(!machine.closesAtEndOfInput)
        machine.deferredAnswerSent()
        #expect(machine.state == .ready)
        #expect([machine.nextRequest(), machine.nextRequest(), machine.nextRequest()].map { $0?.id } == [3, 4, 5])
        #expect(machine.nextRequest() == nil)
        #expect(machine.closesAtEndOfInput)
    }

    @Test func aMalformedMessageClosesOnceAndDropsWhatWaits() {
        var machine = ConnectionStateMachine()
        _ = machine.received(Self.hello)
        _ = machine.received(ClientMessage(id: 2, request: .status))
        let error = WireError(code: WireError.malformedMessage, message: "bad")
        #expect(machine.malformed(error) == .fail(id: nil, error))
        #expect(machine.nextRequest() == nil)
        #expect(machine.malformed(error) == .ignore)
        #expect(machine.closesAtEndOfInput)
        // A deferred answer that completes after the failure does not reopen the connection.
        machine.deferredAnswerSent()
        #expect(machine.state == .closing)
    }
}
