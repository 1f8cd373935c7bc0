import Foundation
import FoundationNetworking
import Testing

@testable import KeyjarLoader
@testable import KeyjarTransfer

/// A connection's lifecycle without a server: every state × event, earlier attempts and
/// challenges not heard, held and split bodies, the redirect limit, the end.
@Suite("Load state machine")
struct LoadStateMachineTests {
    /// Stand in for a libcurl transfer and a registered protocol (compared by identity).
    final class Transfer {}
    final class Instance {}
    typealias Machine = LoadStateMachine<Transfer, Instance, String>

    /// The states by name (a transfer's by what its body is for), for tables.
    enum Phase: CaseIterable {
        case created, preparing, awaitingHead, streaming, splitting, holding, loadingProtocol, challenged
        case finished, failed, cancelled
    }

    static let url = URL(string: "http://127.0.0.1/")!
    static let redirect = ResponseHead(
        statusCode: 302,
        httpVersion: "HTTP/1.1",
        reasonPhrase: "Found",
        fields: [(name: "Location", value: "/next")]
    )
    static let multipart = ResponseHead(
        statusCode: 200,
        httpVersion: "HTTP/1.1",
        reasonPhrase: "OK",
        fields: [(name: "Content-Type", value: "multipart/x-mixed-replace; boundary=b")]
    )

    struct Fixture {
        var machine = Machine()
        let transfer = Transfer()
        let instance = Instance()
    }

    /// A machine driven into `phase` by legal events: attempt 1 on `transfer` or `instance`,
    /// challenge 1 ("c") waiting.
    static func fixture(in phase: Phase) throws -> Fixture {
        var fixture = Fixture()
        let transfer = fixture.transfer
        func startTransfer() throws {
            _ = fixture.machine.begin()
            let number = try #require(fixture.machine.nextAttempt() as Int?)
            fixture.machine.transferStarted(transfer, attempt: number)
        }
        switch phase {
        case .created:
            break
        case .preparing:
            _ = fixture.machine.begin()
        case .awaitingHead:
            try startTransfer()
        case .streaming:
            try startTransfer()
            fixture.machine.bodyIs(.streaming)
        case .splitting:
            try startTransfer()
            let splitter = try #require(MultipartReplaceSplitter(contentType: "multipart/x-mixed-replace; boundary=b"))
            fixture.machine.bodyIs(.splitting(splitter, head: multipart))
        case .holding:
            try startTransfer()
            let response = try #require(redirect.httpResponse(for: url))
            fixture.machine.bodyIs(.holding(redirect, response, Machine.HeldBody(Data("a".utf8))))
        case .loadingProtocol:
            _ = fixture.machine.begin()
            let number = try #require(fixture.machine.nextAttempt() as Int?)
            fixture.machine.protocolStarted(fixture.instance, attempt: number)
        case .challenged:
            _ = fixture.machine.begin()
            let number = fixture.machine.nextChallengeNumber()
            fixture.machine.challengePresented("c", number: number)
        case .finished, .failed, .cancelled:
            try startTransfer()
            let ending: Machine.Ending = phase == .finished ? .finished : phase == .failed ? .failed : .cancelled
            let ended = fixture.machine.end(ending)
            #expect(ended)
        }
        #expect(Self.phase(of: fixture.machine) == phase, "the fixture for \(phase)")
        return fixture
    }

    static func phase(of machine: Machine) -> Phase {
        switch machine.state {
        case .created: .created
        case .preparing: .preparing
        case .transferring(_, _, .awaitingHead): .awaitingHead
        case .transferring(_, _, .streaming): .streaming
        case .transferring(_, _, .splitting): .splitting
        case .transferring(_, _, .holding): .holding
        case .loadingProtocol: .loadingProtocol
        case .challenged: .challenged
        case .ended(.finished): .finished
        case .ended(.failed): .failed
        case .ended(.cancelled): .cancelled
        }
    }

    static func name(of body: Machine.Body?) -> String {
        switch body {
        case nil: "nil"
        case .awaitingHead?: "awaitingHead"
        case .streaming?: "streaming"
        case .splitting?: "splitting"
        case .holding(_, _, let held)?: "holding \(held.data.count)"
        }
    }

    struct Event: CustomTestStringConvertible, Sendable {
        let name: String
        let apply: @Sendable (inout Fixture) -> String
        var testDescription: String { name }
    }

    static let events: [Event] = [
        Event(name: "begin") { $0.machine.begin() ? "yes" : "no" },
        Event(name: "nextAttempt") { $0.machine.nextAttempt().map { "attempt \($0)" } ?? "nil" },
        Event(name: "transferStarted") { fixture in
            fixture.machine.transferStarted(Transfer(), attempt: fixture.machine.attempts)
            return "-"
        },
        Event(name: "protocolStarted") { fixture in
            fixture.machine.protocolStarted(Instance(), attempt: fixture.machine.attempts)
            return "-"
        },
        Event(name: "transferOfAttempt1") { $0.machine.transfer(forAttempt: 1) === $0.transfer ? "transfer" : "nil" },
        Event(name: "isProtocolCurrent") { $0.machine.isProtocolCurrent(attempt: 1) ? "yes" : "no" },
        Event(name: "bodyIsStreaming") { fixture in
            fixture.machine.bodyIs(.streaming)
            return "-"
        },
        Event(name: "dataArrived") { fixture in
            switch fixture.machine.dataArrived(Data("--b\r\n\r\nx".utf8)) {
            case nil: "nil"
            case .deliver: "deliver"
            case .held: "held"
            case .parts: "parts"
            }
        },
        Event(name: "transferCompleted") { name(of: $0.machine.transferCompleted()) },
        Event(name: "abandonTransfer") { $0.machine.abandonTransfer() === $0.transfer ? "transfer" : "nil" },
        Event(name: "protocolStopped") { $0.machine.protocolStopped() === $0.instance ? "instance" : "nil" },
        Event(name: "redirected") { $0.machine.redirected(maximum: 1) ? "yes" : "no" },
        Event(name: "nextChallengeNumber") { "challenge \($0.machine.nextChallengeNumber())" },
        Event(name: "challengePresented") { fixture in
            fixture.machine.challengePresented("d", number: fixture.machine.challenges)
            return "-"
        },
        Event(name: "challengeResolved") { $0.machine.challengeResolved(1) ?? "nil" },
        Event(name: "challengeCancelled") { $0.machine.challengeCancelled() ?? "nil" },
        Event(name: "end") { $0.machine.end(.failed) ? "yes" : "no" },
    ]

    /// Every event's answer and next state, for the states where it does something; in every
    /// other state it answers `otherwise` and changes nothing.
    struct Row: Sendable {
        var changes: [Phase: (String, Phase)]
        var otherwise: String
    }

    static let transfers: [Phase] = [.awaitingHead, .streaming, .splitting, .holding]
    static let ends: [Phase] = [.finished, .failed, .cancelled]

    static let expected: [String: Row] = [
        "begin": Row(changes: [.created: ("yes", .preparing)], otherwise: "no"),
        "nextAttempt": Row(changes: [.preparing: ("attempt 1", .preparing)], otherwise: "nil"),
        "transferStarted": Row(changes: [.preparing: ("-", .awaitingHead)], otherwise: "-"),
        "protocolStarted": Row(changes: [.preparing: ("-", .loadingProtocol)], otherwise: "-"),
        "transferOfAttempt1": Row(
            changes: Dictionary(uniqueKeysWithValues: LoadStateMachineTests.transfers.map { ($0, ("transfer", $0)) }),
            otherwise: "nil"
        ),
        "isProtocolCurrent": Row(changes: [.loadingProtocol: ("yes", .loadingProtocol)], otherwise: "no"),
        "bodyIsStreaming": Row(
            changes: Dictionary(uniqueKeysWithValues: LoadStateMachineTests.transfers.map { ($0, ("-", .streaming)) }),
            otherwise: "-"
        ),
        "dataArrived": Row(
            changes: [
                .awaitingHead: ("deliver", .awaitingHead), .streaming: ("deliver", .streaming),
                .splitting: ("parts", .splitting), .holding: ("held", .holding),
            ],
            otherwise: "nil"
        ),
        "transferCompleted": Row(
            changes: [
                .awaitingHead: ("awaitingHead", .preparing), .streaming: ("streaming", .preparing),
                .splitting: ("splitting", .preparing), .holding: ("holding 1", .preparing),
            ],
            otherwise: "nil"
        ),
        "abandonTransfer": Row(
            changes: Dictionary(
                uniqueKeysWithValues: LoadStateMachineTests.transfers.map { ($0, ("transfer", .preparing)) }
            ),
            otherwise: "nil"
        ),
        "protocolStopped": Row(changes: [.loadingProtocol: ("instance", .preparing)], otherwise: "nil"),
        "redirected": Row(
            changes: Dictionary(
                uniqueKeysWithValues: Phase.allCases.filter { !LoadStateMachineTests.ends.contains($0) }.map {
                    ($0, ("yes", $0))
                }
            ),
            otherwise: "no"
        ),
        "nextChallengeNumber": Row(
            changes: Dictionary(uniqueKeysWithValues: Phase.allCases.map { ($0, ("challenge 1", $0)) }).merging(
                [.challenged: ("challenge 2", .challenged)],
                uniquingKeysWith: { $1 }
            ),
            otherwise: "-"
        ),
        "challengePresented": Row(changes: [.preparing: ("-", .challenged)], otherwise: "-"),
        "challengeResolved": Row(changes: [.challenged: ("c", .preparing)], otherwise: "nil"),
        "challengeCancelled": Row(changes: [.challenged: ("c", .preparing)], otherwise: "nil"),
        "end": Row(
            changes: Dictionary(
                uniqueKeysWithValues: Phase.allCases.filter { !LoadStateMachineTests.ends.contains($0) }.map {
                    ($0, ("yes", .failed))
                }
            ),
            otherwise: "no"
        ),
    ]

    @Test func theTableCoversEveryEvent() {
        #expect(Set(Self.expected.keys) == Set(Self.events.map(\.name)))
    }

    @Test(arguments: Self.events, Phase.allCases)
    func everyEventInEveryState(_ event: Event, _ phase: Phase) throws {
        var fixture = try Self.fixture(in: phase)
        let row = try #require(Self.expected[event.name])
        let (answer, next) = row.changes[phase] ?? (row.otherwise, phase)
        let given = event.apply(&fixture)
        #expect(given == answer, "\(event.name) in \(phase)")
        #expect(Self.phase(of: fixture.machine) == next, "\(event.name) in \(phase)")
        #expect(fixture.machine.isEnded == Self.ends.contains(next))
        #expect((fixture.machine.transfer != nil) == Self.transfers.contains(next))
    }

    @Test func eventsOfAnEarlierAttemptAreNotHeard() throws {
        // Given attempt 1 that ended in a redirect, and attempt 2 on another transfer
        var fixture = try Self.fixture(in: .holding)
        _ = fixture.machine.transferCompleted()
        let redirected = fixture.machine.redirected(maximum: 20)
        let second = try #require(fixture.machine.nextAttempt() as Int?)
        let transfer = Transfer()
        fixture.machine.transferStarted(transfer, attempt: second)
        // Then only attempt 2's events are heard, and its body starts with no head
        #expect(redirected && second == 2)
        #expect(fixture.machine.transfer(forAttempt: 1) == nil)
        #expect(fixture.machine.transfer(forAttempt: 2) === transfer)
        #expect(Self.phase(of: fixture.machine) == .awaitingHead)
        // A start for an attempt that is not the next one is refused
        var other = try Self.fixture(in: .preparing)
        other.machine.transferStarted(Transfer(), attempt: 7)
        other.machine.protocolStarted(Instance(), attempt: 7)
        #expect(Self.phase(of: other.machine) == .preparing)
        // A protocol's attempt likewise
        var protocolLoad = try Self.fixture(in: .loadingProtocol)
        #expect(!protocolLoad.machine.isProtocolCurrent(attempt: 2))
        _ = protocolLoad.machine.protocolStopped()
        #expect(!protocolLoad.machine.isProtocolCurrent(attempt: 1))
    }

    @Test func aHeldBodyKeepsEveryByteUntilTheEnd() throws {
        var fixture = try Self.fixture(in: .holding)
        for chunk in ["b", "cd"] {
            let answer = fixture.machine.dataArrived(Data(chunk.utf8))
            guard case .held = answer else {
                Issue.record("expected held, got \(String(describing: answer))")
                return
            }
        }
        let body = fixture.machine.transferCompleted()
        guard case .holding(let head, _, let held) = body else {
            Issue.record("expected a held body, got \(Self.name(of: body))")
            return
        }
        #expect(head.statusCode == 302 && String(decoding: held.data, as: UTF8.self) == "abcd")
    }

    /// A held body keeps at most its limit; what comes beyond is counted, never kept (a gzip
    /// bomb in a redirect decodes to gigabytes).
    @Test func aHeldBodyKeepsNoMoreThanItsLimit() {
        let limit = Machine.HeldBody.limit
        var held = Machine.HeldBody(Data(repeating: 1, count: limit - 10))
        held.append(Data(repeating: 2, count: 30))
        held.append(Data(repeating: 3, count: 1 << 20))
        #expect(held.data.count == limit && held.data.last == 2)
        #expect(held.dropped == 20 + (1 << 20))
        var small = Machine.HeldBody()
        small.append(Data("ok".utf8))
        #expect(small.data == Data("ok".utf8) && small.dropped == 0)
    }

    @Test func aMultipartBodyIsSplitAcrossChunks() throws {
        var fixture = try Self.fixture(in: .splitting)
        var pieces: [MultipartReplaceSplitter.Piece] = []
        for chunk in ["--b\r\nContent-Type: text/a\r\n\r\nfir", "st\r\n--b--\r\n"] {
            guard case .parts(let more, let head) = fixture.machine.dataArrived(Data(chunk.utf8)) else {
                Issue.record("expected parts")
                return
            }
            #expect(head.statusCode == 200)
            pieces += more
        }
        let text = pieces.compactMap { piece -> String? in
            if case .data(let data) = piece { String(decoding: data, as: UTF8.self) } else { nil }
        }
        #expect(pieces.first == .part(["Content-Type": "text/a"]))
        #expect(text.joined() == "first")
    }

    @Test func redirectsStopPastTheMaximum() {
        var machine = Machine()
        _ = machine.begin()
        let answers = (0..<3).map { _ in machine.redirected(maximum: 2) }
        #expect(answers == [true, true, false])
        #expect(machine.redirects == 3)
    }

    @Test func onlyTheWaitingChallengeIsAnswered() throws {
        var fixture = try Self.fixture(in: .challenged)
        // An answer to another number is ignored; the right one is taken once
        #expect(fixture.machine.challengeResolved(2) == nil)
        #expect(fixture.machine.challengeResolved(1) == "c")
        #expect(fixture.machine.challengeResolved(1) == nil)
        // A challenge presented with a stale number does not wait
        let number = fixture.machine.nextChallengeNumber()
        fixture.machine.challengePresented("e", number: number - 1)
        #expect(Self.phase(of: fixture.machine) == .preparing)
        // Nor is one answered after the load ended
        fixture.machine.challengePresented("f", number: number)
        let ended = fixture.machine.end(.cancelled)
        #expect(ended)
        #expect(fixture.machine.challengeResolved(number) == nil)
        #expect(fixture.machine.challengeCancelled() == nil)
    }

    @Test func theEndIsFinal() throws {
        for ending in [Machine.Ending.finished, .failed, .cancelled] {
            var fixture = try Self.fixture(in: .streaming)
            let first = fixture.machine.end(ending)
            let second = fixture.machine.end(.failed)
            let begun = fixture.machine.begin()
            let attempt = fixture.machine.nextAttempt()
            #expect(first && !second && !begun && attempt == nil)
            guard case .ended(let recorded) = fixture.machine.state else {
                Issue.record("expected the end, got \(fixture.machine.state)")
                continue
            }
            #expect(recorded == ending)
        }
    }
}
