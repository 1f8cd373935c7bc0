import Foundation
import KeyjarProtocol
import Testing

@testable import KeyjarConnection

/// Descriptors that are never opened: the machine only compares them.
private let firstSocket = UnixSocket(descriptor: 7)
private let secondSocket = UnixSocket(descriptor: 8)

/// The client connection's rules without a socket: connecting, the modes keyjard is told,
/// losing and remaking the connection, the reader thread, which reply goes to whom, closing.
/// Every state meets every event; the sockets are descriptors that are never opened.
struct ClientConnectionStateMachineTests {
    typealias Machine = ClientConnectionStateMachine<String>

    /// The four states, each reached the way the client reaches it.
    enum Given: CaseIterable, CustomTestStringConvertible {
        case disconnected, connecting, connected, closed

        var testDescription: String { "\(self)" }

        func machine(mode: Machine.Mode = .following) -> Machine {
            var machine = Machine()
            switch self {
            case .disconnected: break
            case .connecting: _ = machine.connectRequested()
            case .connected:
                _ = machine.connectRequested()
                _ = machine.connectSucceeded(firstSocket, mode: mode)
            case .closed:
                _ = machine.connectRequested()
                _ = machine.connectSucceeded(firstSocket, mode: mode)
                _ = machine.close()
            }
            return machine
        }
    }

    // MARK: Connecting

    @Test(arguments: [
        (Given.disconnected, Machine.ConnectAction.connect, Machine.State.connecting),
        (.connecting, .alreadyConnecting, .connecting),
        (.connected, .useExisting(firstSocket), .connected(firstSocket)),
        (.closed, .closed, .closed),
    ])
    func aConnectionIsMadeOnlyWhenThereIsNone(
        given: Given,
        action: Machine.ConnectAction,
        after: Machine.State
    ) {
        // Given a machine in each state, when a caller or the reader thread needs a connection
        var machine = given.machine()
        // Then only a disconnected one connects, and one thread at a time
        #expect(machine.connectRequested() == action)
        #expect(machine.state == after)
    }

    @Test(arguments: [
        (Given.disconnected, Machine.ConnectedAction.discard, Machine.State.disconnected),
        (.connecting, .install, .connected(secondSocket)),
        (.connected, .discard, .connected(firstSocket)),
        (.closed, .discard, .closed),
    ])
    func onlyTheConnectionBeingMadeIsInstalled(
        given: Given,
        action: Machine.ConnectedAction,
        after: Machine.State
    ) {
        // Given a machine in each state, told following
        var machine = given.machine(mode: .following)
        let modeBefore = machine.mode
        // When a handshake ends on a new socket with keyjard told to push everything
        let outcome = machine.connectSucceeded(secondSocket, mode: .subscribed)
        // Then only a connection that was being made is installed, with its mode; one made
        // while the client closed (or nobody asked for) is discarded and changes nothing
        #expect(outcome == action)
        #expect(machine.state == after)
        #expect(machine.mode == (action == .install ? .subscribed : modeBefore))
    }

    @Test(arguments: [
        (Given.disconnected, Machine.State.disconnected),
        (.connecting, .disconnected),
        (.connected, .connected(firstSocket)),
        (.closed, .closed),
    ])
    func aFailedConnectionLeavesTheClientDisconnected(given: Given, after: Machine.State) {
        // Given a machine in each state, when a connection attempt fails
        var machine = given.machine()
        machine.connectFailed()
        // Then one being made is given up (the next call tries again); nothing else changes
        #expect(machine.state == after)
    }

    @Test func theReaderThreadWaitsLongerAfterEachFailedReconnectionUpToTwoSeconds() {
        // Given a listening client whose connection was lost
        var machine = Given.connected.machine(mode: .subscribed)
        _ = machine.connectionLost(firstSocket)
        // When every reconnection fails
        var delays: [TimeInterval] = []
        for _ in 0..<8 {
            #expect(machine.connectRequested() == .connect)
            guard case .retry(let delay) = machine.reconnectFailed() else {
                Issue.record("a disconnected client's reader thread stopped retrying")
                break
            }
            #expect(machine.state == .disconnected)
            delays.append(delay)
        }
        // Then it waits twice as long each time, at most two seconds
        #expect(delays == [0.05, 0.1, 0.2, 0.4, 0.8, 1.6, 2, 2])
        // And a connection that succeeds starts the backoff again
        _ = machine.connectRequested()
        #expect(machine.connectSucceeded(firstSocket, mode: .subscribed) == .install)
        #expect(machine.reconnectDelay == Machine.firstReconnectDelay)
    }

    @Test(arguments: [
        (Given.disconnected, Machine.ReconnectAction.retry(after: 0.05)),
        (.connecting, .retry(after: 0.05)),
        (.connected, .retry(after: 0.05)),
        (.closed, .stop),
    ])
    func aFailedReconnectionStopsTheReaderThreadOnlyWhenClosed(given: Given, action: Machine.ReconnectAction) {
        var machine = given.machine()
        #expect(machine.reconnectFailed() == action)
        #expect(machine.state != .connecting)
    }

    @Test func aClientClosedWhileConnectingDiscardsTheConnectionAndStops() {
        // Given a reader thread reconnecting
        var machine = Given.connecting.machine()
        // When the client is closed meanwhile
        #expect(machine.close() == nil)
        // Then the connection it makes is discarded, and it stops rather than retry
        #expect(machine.connectSucceeded(firstSocket, mode: .subscribed) == .discard)
        #expect(machine.reconnectFailed() == .stop)
        #expect(machine.readerNext == .stop)
        #expect(machine.connectRequested() == .closed)
    }

    // MARK: Losing and closing

    @Test(arguments: Given.allCases)
    func aLostConnectionFailsEveryWaitingCallerAndForgetsInternalRequests(given: Given) {
        // Given a connected machine with two callers waiting, a snapshot asked for and a
        // change of mode sent without waiting, then brought to each state
        var machine = Given.connected.machine(mode: .following)
        let first = machine.requestSent(for: "first")
        let second = machine.requestSent(for: "second")
        let snapshot = machine.snapshotRequested()
        let switchToSubscribe = machine.synchronisationSent(
            listens: true,
            after: 3,
            for: nil,
            onlyWhenChanged: true
        )
        switch given {
        case .disconnected: _ = machine.connectionLost(firstSocket)
        case .connecting:
            _ = machine.connectionLost(firstSocket)
            _ = machine.connectRequested()
        case .connected: break
        // Closing keeps the callers waiting: the reader thread finds the connection lost.
        case .closed: _ = machine.close()
        }
        let stateBefore = machine.state
        // When the connection on the socket is lost
        let failed = machine.connectionLost(firstSocket)
        // Then every caller still waiting fails, whatever the state
        let waiting = given == .connected || given == .closed
        #expect(failed.sorted() == (waiting ? ["first", "second"] : []))
        #expect(machine.waitingCount == 0)
        // And the replies that will never come are forgotten
        for id in [first?.id, second?.id, snapshot?.id, switchToSubscribe?.id] {
            #expect(id != nil)
            #expect(machine.replyArrived(id: id ?? 0) == .drop)
        }
        // And only the connection that was current is over; keyjard's mode is remembered for
        // the reconnection to tell again
        #expect(machine.state == (given == .connected ? .disconnected : stateBefore))
        #expect(machine.mode == .subscribed)
    }

    @Test func aLostConnectionThatIsNotTheCurrentOneLeavesTheCurrentOne() {
        var machine = Given.connected.machine()
        _ = machine.requestSent(for: "caller")
        // The waiters go with any connection the receiver read (the client only reports its
        // receiver's socket), but the state keeps the current socket.
        #expect(machine.connectionLost(secondSocket) == ["caller"])
        #expect(machine.state == .connected(firstSocket))
    }

    @Test(arguments: Given.allCases)
    func closingIsForGoodAndHandsOverTheSocketToShutDown(given: Given) {
        var machine = given.machine()
        // When the client is closed
        let socket = machine.close()
        // Then a connected socket is handed over to be shut down, once, and nothing connects
        #expect(socket == (given == .connected ? firstSocket : nil))
        #expect(machine.state == .closed && machine.isClosed)
        #expect(machine.close() == nil)
        #expect(machine.socket == nil)
        #expect(machine.connectRequested() == .closed)
        #expect(machine.readerNext == .stop)
        #expect(machine.requestSent(for: "late") == nil)
        #expect(machine.snapshotRequested() == nil)
        #expect(machine.synchronisationSent(listens: true, after: 0, for: nil, onlyWhenChanged: false) == nil)
    }

    // MARK: The reader thread

    @Test(arguments: [
        (Given.disconnected, Machine.ReaderAction.reconnect),
        (.connecting, .reconnect),
        (.connected, .read(firstSocket)),
        (.closed, .stop),
    ])
    func theReaderThreadReadsWhileConnectedReconnectsWhileNotAndEndsWhenClosed(
        given: Given,
        action: Machine.ReaderAction
    ) {
        #expect(given.machine().readerNext == action)
    }

    @Test(arguments: Given.allCases)
    func theReaderThreadIsStartedOnceInAnyState(given: Given) {
        var machine = given.machine()
        // Given no reader thread: callers read their own replies
        #expect(!machine.hasReaderThread && machine.readerThread == .notStarted)
        // When something listens, the thread is started once, however often it is needed
        let first = machine.readerThreadNeeded()
        #expect(first)
        #expect(machine.readerThread == .starting && machine.hasReaderThread)
        let again = machine.readerThreadNeeded()
        #expect(!again)
        // Then once it runs it is known by its thread
        machine.readerThreadStarted(thread: 42)
        #expect(machine.readerThread == .running(thread: 42))
        #expect(machine.isReaderThread(42) && !machine.isReaderThread(43))
        let whileRunning = machine.readerThreadNeeded()
        #expect(!whileRunning)
        #expect(machine.hasReaderThread)
        // And the connection's state is not changed by it
        #expect(machine.state == given.machine().state)
    }

    // MARK: Requests and replies

    @Test(arguments: Given.allCases)
    func requestsGoOutOnlyWhileConnectedEachWithANewID(given: Given) {
        var machine = given.machine()
        let sent = [machine.requestSent(for: "a"), machine.requestSent(for: "b")]
        let snapshot = machine.snapshotRequested()
        if given == .connected {
            // Then each goes out on the connection's socket, with an id of its own
            #expect(sent.map { $0?.socket } == [firstSocket, firstSocket])
            #expect(snapshot?.socket == firstSocket)
            let ids = [sent[0]?.id, sent[1]?.id, snapshot?.id].compactMap { $0 }
            #expect(Set(ids).count == 3)
            #expect(machine.waitingCount == 2)
        } else {
            // Else the caller fails as unreachable, and nothing waits
            #expect(sent.allSatisfy { $0 == nil } && snapshot == nil)
            #expect(machine.waitingCount == 0)
        }
    }

    @Test func eachReplyGoesToItsCallerOnce() {
        var machine = Given.connected.machine()
        let first = machine.requestSent(for: "first")
        let second = machine.requestSent(for: "second")
        // Replies come in any order, each to its own caller, once
        #expect(machine.replyArrived(id: second?.id ?? 0) == .resume("second"))
        #expect(machine.replyArrived(id: first?.id ?? 0) == .resume("first"))
        #expect(machine.replyArrived(id: first?.id ?? 0) == .drop)
        // A reply nobody asked for is dropped
        #expect(machine.replyArrived(id: 999) == .drop)
        #expect(machine.waitingCount == 0)
    }

    @Test func aCallerThatGaveUpGetsNoReply() {
        var machine = Given.connected.machine()
        let sent = machine.requestSent(for: "impatient")
        machine.requestAbandoned(id: sent?.id ?? 0)
        #expect(machine.waitingCount == 0)
        #expect(machine.replyArrived(id: sent?.id ?? 0) == .drop)
        // Abandoning what is not waiting changes nothing
        machine.requestAbandoned(id: 999)
        #expect(machine.state == .connected(firstSocket))
    }

    @Test func aSnapshotTheClientAskedForItselfReplacesTheReplicaOnce() {
        var machine = Given.connected.machine()
        let snapshot = machine.snapshotRequested()
        #expect(machine.waitingCount == 0)
        #expect(machine.replyArrived(id: snapshot?.id ?? 0) == .applySnapshot)
        #expect(machine.replyArrived(id: snapshot?.id ?? 0) == .drop)
    }

    @Test(arguments: Given.allCases)
    func aRefusedConnectionFailsEveryCallerButKeepsInternalRequests(given: Given) {
        // Given callers and a snapshot waiting on a connection, brought to each state
        var machine = Given.connected.machine()
        _ = machine.requestSent(for: "a")
        _ = machine.requestSent(for: "b")
        let snapshot = machine.snapshotRequested()
        switch given {
        case .disconnected, .connecting:
            _ = machine.connectionLost(firstSocket)
            _ = machine.requestSent(for: "unsent")
            if given == .connecting { _ = machine.connectRequested() }
        case .connected: break
        case .closed: _ = machine.close()
        }
        let stateBefore = machine.state
        // When keyjard refuses the whole connection (a failure without an id)
        let failed = machine.connectionRefused()
        // Then every waiting caller fails with its reason; the state waits for the connection
        // to end, and a snapshot's reply (should one still come) is still applied
        let connected = given == .connected || given == .closed
        #expect(failed.sorted() == (connected ? ["a", "b"] : []))
        #expect(machine.waitingCount == 0)
        #expect(machine.state == stateBefore)
        #expect(machine.replyArrived(id: snapshot?.id ?? 0) == (connected ? .applySnapshot : .drop))
    }

    // MARK: Following and subscribing

    struct Synchronisation: Sendable, CustomTestStringConvertible {
        var mode: Machine.Mode
        var listens: Bool
        var onlyWhenChanged: Bool
        /// What is sent, nil for nothing; then the mode keyjard was told.
        var sent: Request?
        var after: Machine.Mode

        var testDescription: String {
            "\(mode), listens \(listens), onlyWhenChanged \(onlyWhenChanged)"
        }
    }

    @Test(arguments: [
        // A change of mode is sent; the same mode again only when asked regardless.
        Synchronisation(
            mode: .following,
            listens: true,
            onlyWhenChanged: true,
            sent: .subscribe(after: 9),
            after: .subscribed
        ),
        Synchronisation(mode: .following, listens: false, onlyWhenChanged: true, sent: nil, after: .following),
        Synchronisation(
            mode: .following,
            listens: false,
            onlyWhenChanged: false,
            sent: .follow(after: 9),
            after: .following
        ),
        Synchronisation(
            mode: .following,
            listens: true,
            onlyWhenChanged: false,
            sent: .subscribe(after: 9),
            after: .subscribed
        ),
        Synchronisation(
            mode: .subscribed,
            listens: false,
            onlyWhenChanged: true,
            sent: .follow(after: 9),
            after: .following
        ),
        Synchronisation(mode: .subscribed, listens: true, onlyWhenChanged: true, sent: nil, after: .subscribed),
        Synchronisation(
            mode: .subscribed,
            listens: true,
            onlyWhenChanged: false,
            sent: .subscribe(after: 9),
            after: .subscribed
        ),
        Synchronisation(
            mode: .subscribed,
            listens: false,
            onlyWhenChanged: false,
            sent: .follow(after: 9),
            after: .following
        ),
        // A one-shot connection never follows or subscribes.
        Synchronisation(mode: .oneShot, listens: true, onlyWhenChanged: true, sent: nil, after: .oneShot),
        Synchronisation(mode: .oneShot, listens: false, onlyWhenChanged: false, sent: nil, after: .oneShot),
    ])
    func keyjardIsToldTheModeTheProcessWants(_ row: Synchronisation) {
        // Given a connection in a mode
        var machine = Given.connected.machine(mode: row.mode)
        // When the process's listening is (re)decided, sent without waiting
        let sent = machine.synchronisationSent(
            listens: row.listens,
            after: 9,
            for: nil,
            onlyWhenChanged: row.onlyWhenChanged
        )
        // Then the request fits the mode wanted, after the replica's sequence number
        #expect(sent?.request == row.sent)
        #expect(sent.map { $0.socket } == (row.sent == nil ? nil : firstSocket))
        #expect(machine.mode == row.after)
        // And its reply is nobody's
        if let sent { #expect(machine.replyArrived(id: sent.id) == .drop) }
        #expect(machine.waitingCount == 0)
    }

    @Test func aCatchUpWaitsForItsSynchronisationsReply() {
        // Given a following client, when a lookup catches up (the same mode, waited for)
        var machine = Given.connected.machine(mode: .following)
        let sent = machine.synchronisationSent(listens: false, after: 4, for: "lookup", onlyWhenChanged: false)
        // Then the follow goes out and its reply goes to the lookup
        #expect(sent?.request == .follow(after: 4))
        #expect(machine.waitingCount == 1)
        #expect(machine.replyArrived(id: sent?.id ?? 0) == .resume("lookup"))
    }

    @Test(arguments: [Given.disconnected, .connecting, .closed])
    func nothingIsToldWhileNotConnectedAndTheModeIsKept(given: Given) {
        // Given a subscribed client that is not connected
        var machine = given.machine(mode: .subscribed)
        let modeBefore = machine.mode
        // When the process stops listening
        let sent = machine.synchronisationSent(listens: false, after: 1, for: nil, onlyWhenChanged: true)
        // Then nothing is sent and the mode is unchanged: the reconnection tells keyjard the
        // mode wanted then
        #expect(sent == nil)
        #expect(machine.mode == modeBefore)
    }

    // MARK: A whole life

    @Test func aListeningClientLosesItsConnectionAndMakesItAgain() {
        var machine = Machine()
        #expect(machine.mode == nil && machine.state == .disconnected)
        // The first connection: a snapshot, then follow (nothing listens yet)
        #expect(machine.connectRequested() == .connect)
        #expect(machine.connectSucceeded(firstSocket, mode: .following) == .install)
        #expect(machine.synchronisationSent(listens: false, after: 5, for: nil, onlyWhenChanged: true) == nil)
        // A changes() stream opens: subscribe, and the reader thread starts
        #expect(
            machine.synchronisationSent(listens: true, after: 5, for: nil, onlyWhenChanged: true)?.request
                == .subscribe(after: 5)
        )
        let startsReader = machine.readerThreadNeeded()
        #expect(startsReader)
        machine.readerThreadStarted(thread: 1)
        #expect(machine.readerNext == .read(firstSocket))
        // A caller's request is cut off by keyjard's restart
        _ = machine.requestSent(for: "caller")
        #expect(machine.connectionLost(firstSocket) == ["caller"])
        #expect(machine.readerNext == .reconnect)
        #expect(machine.requestSent(for: "meanwhile") == nil)
        // The reader thread reconnects after one failure; the mode is told again
        #expect(machine.connectRequested() == .connect)
        #expect(machine.reconnectFailed() == .retry(after: 0.05))
        #expect(machine.connectRequested() == .connect)
        #expect(machine.connectSucceeded(secondSocket, mode: .subscribed) == .install)
        #expect(machine.synchronisationSent(listens: true, after: 7, for: nil, onlyWhenChanged: true) == nil)
        #expect(machine.readerNext == .read(secondSocket))
        // Closing hands the socket over and ends the reader thread
        #expect(machine.close() == secondSocket)
        #expect(machine.readerNext == .stop)
    }
}
