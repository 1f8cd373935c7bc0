import Foundation
import Testing

@testable import KeyjarLoader

/// The download's lifecycle without a server or a file: every state × event, stale
/// connections, and what ending does with the partial data.
@Suite("Download state machine")
struct DownloadStateMachineTests {
    /// Stands in for a connection (compared by identity).
    final class Connection {}
    /// Stands in for a download's files.
    final class Files {}
    typealias Machine = DownloadStateMachine<Connection, Files>

    /// The states by name, for tables.
    enum Phase: CaseIterable {
        case idle, connecting, awaitingResponse, receiving, alreadyComplete, committing, finished, failed, cancelled
    }

    static let record = DownloadResumeData(
        url: URL(string: "http://127.0.0.1/file")!,
        validator: "\"v1\"",
        destinationPath: "/tmp/file",
        allowOverwrite: false,
        expectedLength: 10
    )

    /// One machine with its connection and files.
    struct Fixture {
        var machine: Machine
        let connection = Connection()
        let files = Files()
    }

    /// A download continuing `record`, driven into `phase` by legal events: its partial file is
    /// `files`, its connection `connection`.
    static func fixture(in phase: Phase) -> Fixture {
        var fixture = Fixture(machine: Machine(resuming: record))
        let connection = fixture.connection
        func drive(_ steps: Phase...) {
            for step in steps {
                switch step {
                case .idle: break
                case .connecting:
                    let started = fixture.machine.start()
                    #expect(started)
                    fixture.machine.partialOpened(fixture.files, length: 4)
                case .awaitingResponse:
                    let made = fixture.machine.connectionMade(connection)
                    #expect(made)
                case .receiving:
                    let accepted = fixture.machine.resumeAccepted(on: connection)
                    #expect(accepted)
                case .alreadyComplete: fixture.machine.entityAlreadyComplete(on: connection)
                case .committing:
                    let taken = fixture.machine.connectionFinished(connection) != nil
                    #expect(taken)
                case .finished: fixture.machine.committed()
                case .failed:
                    let failed = fixture.machine.fail() != nil
                    #expect(failed)
                case .cancelled:
                    let cancelled = fixture.machine.cancel() != nil
                    #expect(cancelled)
                }
            }
        }
        switch phase {
        case .idle: break
        case .connecting: drive(.connecting)
        case .awaitingResponse: drive(.connecting, .awaitingResponse)
        case .receiving: drive(.connecting, .awaitingResponse, .receiving)
        case .alreadyComplete: drive(.connecting, .awaitingResponse, .alreadyComplete)
        case .committing: drive(.connecting, .awaitingResponse, .receiving, .committing)
        case .finished: drive(.connecting, .awaitingResponse, .receiving, .committing, .finished)
        case .failed: drive(.connecting, .awaitingResponse, .receiving, .failed)
        case .cancelled: drive(.connecting, .awaitingResponse, .receiving, .cancelled)
        }
        #expect(Self.phase(of: fixture.machine) == phase, "the fixture for \(phase)")
        return fixture
    }

    static func phase(of machine: Machine) -> Phase {
        switch machine.state {
        case .idle: .idle
        case .connecting: .connecting
        case .awaitingResponse: .awaitingResponse
        case .receiving: .receiving
        case .alreadyComplete: .alreadyComplete
        case .committing: .committing
        case .finished: .finished
        case .failed: .failed
        case .cancelled: .cancelled
        }
    }

    /// An event applied to a fixture, and what it answered, as a word for the tables.
    struct Event: CustomTestStringConvertible, Sendable {
        let name: String
        let apply: @Sendable (inout Fixture) -> String
        var testDescription: String { name }
    }

    static let events: [Event] = [
        Event(name: "start") { $0.machine.start() ? "yes" : "no" },
        Event(name: "prepareRequest") { fixture in
            switch fixture.machine.prepareRequest() {
            case nil: "nil"
            case .whole: "whole"
            case .continuing(let files, _): files === fixture.files ? "continuing files" : "continuing new"
            }
        },
        Event(name: "partialOpened") { fixture in
            fixture.machine.partialOpened(Files(), length: 9)
            return fixture.machine.offset == 9 ? "opened" : "-"
        },
        Event(name: "connectionMade") { $0.machine.connectionMade(Connection()) ? "yes" : "no" },
        Event(name: "startOver") { $0.machine.startOver(after: $0.connection) ? "yes" : "no" },
        Event(name: "entityComesWhole") { fixture in
            let before = fixture.machine.offset
            fixture.machine.entityComesWhole(on: fixture.connection)
            return fixture.machine.offset == before ? "-" : "offset 0"
        },
        Event(name: "resumeAccepted") { $0.machine.resumeAccepted(on: $0.connection) ? "yes" : "no" },
        Event(name: "entityAlreadyComplete") { fixture in
            fixture.machine.entityAlreadyComplete(on: fixture.connection)
            return "-"
        },
        Event(name: "chooseFiles") { fixture in
            switch fixture.machine.chooseFiles(for: fixture.connection) {
            case nil: "nil"
            case .restart(let files): files === fixture.files ? "restart files" : "restart other"
            case .create: "create"
            case .noDestination: "no destination"
            }
        },
        Event(name: "filesReady") { fixture in
            fixture.machine.filesReady(Files(), on: fixture.connection)
            return "-"
        },
        Event(name: "recordedFiles") { $0.machine.recordedFiles(on: $0.connection) === $0.files ? "files" : "nil" },
        Event(name: "setRecord") { fixture in
            let before = fixture.machine.record
            fixture.machine.setRecord(nil)
            return before != nil && fixture.machine.record == nil ? "cleared" : "-"
        },
        Event(name: "dataArrived") { $0.machine.dataArrived(on: $0.connection) === $0.files ? "files" : "nil" },
        Event(name: "connectionFinished") { fixture in
            guard let taken = fixture.machine.connectionFinished(fixture.connection) else { return "nil" }
            return taken.files === fixture.files ? "commit files" : "commit nothing"
        },
        Event(name: "commitMayFinish") { $0.machine.commitMayFinish() ? "yes" : "no" },
        Event(name: "committed") { fixture in
            fixture.machine.committed()
            return "-"
        },
        Event(name: "commitFailed") { fixture in
            let before = fixture.machine.files
            fixture.machine.commitFailed(fixture.files, undecodable: false)
            return before == nil && fixture.machine.files === fixture.files ? "files back" : "-"
        },
        Event(name: "fail") { fixture in
            guard let failure = fixture.machine.fail() else { return "nil" }
            guard let files = failure.files else { return "fail" }
            #expect(files === fixture.files)
            return failure.keepsFiles ? "fail keeping files" : "fail removing files"
        },
        Event(name: "setDestination") { fixture in
            fixture.machine.setDestination("/tmp/other", allowOverwrite: true) ? "set" : "ignored"
        },
        Event(name: "verdict 404") { fixture in
            switch fixture.machine.verdict(onStatus: 404, on: fixture.connection) {
            case nil: "nil"
            case .save: "save"
            case .missing(let statusCode): "missing \(statusCode)"
            }
        },
        Event(name: "hearsChallengeCancellation") {
            $0.machine.hearsChallengeCancellation(on: $0.connection) ? "yes" : "no"
        },
        Event(name: "cancel") { fixture in
            guard let cancellation = fixture.machine.cancel() else { return "nil" }
            let connection = cancellation.connection.map { $0 === fixture.connection ? "connection" : "other" }
            let files = cancellation.files.map { $0 === fixture.files ? "files" : "other" }
            return (["cancel"] + [connection, files].compactMap { $0 }).joined(separator: " ")
        },
    ]

    /// What each event does in each state: the answer and the state after.
    static let expected: [String: [Phase: (String, Phase)]] = [
        "start": [
            .idle: ("yes", .connecting), .connecting: ("no", .connecting),
            .awaitingResponse: ("no", .awaitingResponse), .receiving: ("no", .receiving),
            .alreadyComplete: ("no", .alreadyComplete), .committing: ("no", .committing),
            .finished: ("no", .finished), .failed: ("no", .failed), .cancelled: ("no", .cancelled),
        ],
        "prepareRequest": [
            .idle: ("nil", .idle), .connecting: ("continuing files", .connecting),
            .awaitingResponse: ("nil", .awaitingResponse), .receiving: ("nil", .receiving),
            .alreadyComplete: ("nil", .alreadyComplete), .committing: ("nil", .committing),
            .finished: ("nil", .finished), .failed: ("nil", .failed), .cancelled: ("nil", .cancelled),
        ],
        "connectionMade": [
            .idle: ("no", .idle), .connecting: ("yes", .awaitingResponse),
            .awaitingResponse: ("no", .awaitingResponse), .receiving: ("no", .receiving),
            .alreadyComplete: ("no", .alreadyComplete), .committing: ("no", .committing),
            .finished: ("no", .finished), .failed: ("no", .failed), .cancelled: ("no", .cancelled),
        ],
        "startOver": [
            .idle: ("no", .idle), .connecting: ("no", .connecting),
            .awaitingResponse: ("yes", .connecting), .receiving: ("no", .receiving),
            .alreadyComplete: ("no", .alreadyComplete), .committing: ("no", .committing),
            .finished: ("no", .finished), .failed: ("no", .failed), .cancelled: ("no", .cancelled),
        ],
        "entityComesWhole": [
            .idle: ("-", .idle), .connecting: ("-", .connecting),
            .awaitingResponse: ("offset 0", .awaitingResponse), .receiving: ("-", .receiving),
            .alreadyComplete: ("-", .alreadyComplete), .committing: ("-", .committing),
            .finished: ("-", .finished), .failed: ("-", .failed), .cancelled: ("-", .cancelled),
        ],
        "resumeAccepted": [
            .idle: ("no", .idle), .connecting: ("no", .connecting),
            .awaitingResponse: ("yes", .receiving), .receiving: ("no", .receiving),
            .alreadyComplete: ("no", .alreadyComplete), .committing: ("no", .committing),
            .finished: ("no", .finished), .failed: ("no", .failed), .cancelled: ("no", .cancelled),
        ],
        "entityAlreadyComplete": [
            .idle: ("-", .idle), .connecting: ("-", .connecting),
            .awaitingResponse: ("-", .alreadyComplete), .receiving: ("-", .receiving),
            .alreadyComplete: ("-", .alreadyComplete), .committing: ("-", .committing),
            .finished: ("-", .finished), .failed: ("-", .failed), .cancelled: ("-", .cancelled),
        ],
        "chooseFiles": [
            .idle: ("nil", .idle), .connecting: ("nil", .connecting),
            .awaitingResponse: ("restart files", .awaitingResponse), .receiving: ("nil", .receiving),
            .alreadyComplete: ("nil", .alreadyComplete), .committing: ("nil", .committing),
            .finished: ("nil", .finished), .failed: ("nil", .failed), .cancelled: ("nil", .cancelled),
        ],
        "filesReady": [
            .idle: ("-", .idle), .connecting: ("-", .connecting),
            .awaitingResponse: ("-", .receiving), .receiving: ("-", .receiving),
            .alreadyComplete: ("-", .alreadyComplete), .committing: ("-", .committing),
            .finished: ("-", .finished), .failed: ("-", .failed), .cancelled: ("-", .cancelled),
        ],
        "dataArrived": [
            .idle: ("nil", .idle), .connecting: ("nil", .connecting),
            .awaitingResponse: ("nil", .awaitingResponse), .receiving: ("files", .receiving),
            .alreadyComplete: ("nil", .alreadyComplete), .committing: ("nil", .committing),
            .finished: ("nil", .finished), .failed: ("nil", .failed), .cancelled: ("nil", .cancelled),
        ],
        "connectionFinished": [
            .idle: ("nil", .idle), .connecting: ("nil", .connecting),
            .awaitingResponse: ("commit files", .committing), .receiving: ("commit files", .committing),
            .alreadyComplete: ("commit files", .committing), .committing: ("nil", .committing),
            .finished: ("nil", .finished), .failed: ("nil", .failed), .cancelled: ("nil", .cancelled),
        ],
        "commitMayFinish": [
            .idle: ("no", .idle), .connecting: ("no", .connecting),
            .awaitingResponse: ("no", .awaitingResponse), .receiving: ("no", .receiving),
            .alreadyComplete: ("no", .alreadyComplete), .committing: ("yes", .committing),
            .finished: ("no", .finished), .failed: ("no", .failed), .cancelled: ("no", .cancelled),
        ],
        "committed": [
            .idle: ("-", .idle), .connecting: ("-", .connecting),
            .awaitingResponse: ("-", .awaitingResponse), .receiving: ("-", .receiving),
            .alreadyComplete: ("-", .alreadyComplete), .committing: ("-", .finished),
            .finished: ("-", .finished), .failed: ("-", .failed), .cancelled: ("-", .cancelled),
        ],
        "partialOpened": [
            .idle: ("-", .idle),
            .connecting: ("opened", .connecting),
            .awaitingResponse: ("-", .awaitingResponse),
            .receiving: ("-", .receiving),
            .alreadyComplete: ("-", .alreadyComplete),
            .committing: ("-", .committing),
            .finished: ("-", .finished),
            .failed: ("-", .failed),
            .cancelled: ("-", .cancelled),
        ],
        "recordedFiles": [
            .idle: ("nil", .idle),
            .connecting: ("nil", .connecting),
            .awaitingResponse: ("nil", .awaitingResponse),
            .receiving: ("files", .receiving),
            .alreadyComplete: ("nil", .alreadyComplete),
            .committing: ("nil", .committing),
            .finished: ("nil", .finished),
            .failed: ("nil", .failed),
            .cancelled: ("nil", .cancelled),
        ],
        "setRecord": [
            .idle: ("-", .idle),
            .connecting: ("cleared", .connecting),
            .awaitingResponse: ("cleared", .awaitingResponse),
            .receiving: ("cleared", .receiving),
            .alreadyComplete: ("cleared", .alreadyComplete),
            .committing: ("cleared", .committing),
            .finished: ("-", .finished),
            .failed: ("-", .failed),
            .cancelled: ("-", .cancelled),
        ],
        "commitFailed": [
            .idle: ("-", .idle),
            .connecting: ("-", .connecting),
            .awaitingResponse: ("-", .awaitingResponse),
            .receiving: ("-", .receiving),
            .alreadyComplete: ("-", .alreadyComplete),
            .committing: ("files back", .committing),
            .finished: ("-", .finished),
            .failed: ("-", .failed),
            .cancelled: ("-", .cancelled),
        ],
        "fail": [
            .idle: ("fail", .failed), .connecting: ("fail keeping files", .failed),
            .awaitingResponse: ("fail keeping files", .failed), .receiving: ("fail keeping files", .failed),
            .alreadyComplete: ("fail keeping files", .failed), .committing: ("fail", .failed),
            .finished: ("nil", .finished), .failed: ("nil", .failed), .cancelled: ("nil", .cancelled),
        ],
        // A resumed download's destination is its record's: every later one is ignored.
        "setDestination": [
            .idle: ("ignored", .idle), .connecting: ("ignored", .connecting),
            .awaitingResponse: ("ignored", .awaitingResponse), .receiving: ("ignored", .receiving),
            .alreadyComplete: ("ignored", .alreadyComplete), .committing: ("ignored", .committing),
            .finished: ("ignored", .finished), .failed: ("ignored", .failed), .cancelled: ("ignored", .cancelled),
        ],
        // Only the response the download awaits is judged; failing is the shell's next event.
        "verdict 404": [
            .idle: ("nil", .idle), .connecting: ("nil", .connecting),
            .awaitingResponse: ("missing 404", .awaitingResponse), .receiving: ("nil", .receiving),
            .alreadyComplete: ("nil", .alreadyComplete), .committing: ("nil", .committing),
            .finished: ("nil", .finished), .failed: ("nil", .failed), .cancelled: ("nil", .cancelled),
        ],
        // While the connection loads, and once it was cancelled with the download.
        "hearsChallengeCancellation": [
            .idle: ("no", .idle), .connecting: ("no", .connecting),
            .awaitingResponse: ("yes", .awaitingResponse), .receiving: ("yes", .receiving),
            .alreadyComplete: ("yes", .alreadyComplete), .committing: ("no", .committing),
            .finished: ("no", .finished), .failed: ("no", .failed), .cancelled: ("yes", .cancelled),
        ],
        "cancel": [
            .idle: ("cancel", .cancelled), .connecting: ("cancel files", .cancelled),
            .awaitingResponse: ("cancel connection files", .cancelled),
            .receiving: ("cancel connection files", .cancelled),
            .alreadyComplete: ("cancel connection files", .cancelled),
            // The files are the shell's while they are committed; the finished connection is
            // cancelled harmlessly.
            .committing: ("cancel connection", .cancelled),
            .finished: ("nil", .finished), .failed: ("nil", .failed), .cancelled: ("nil", .cancelled),
        ],
    ]

    @Test func theTableCoversEveryEventInEveryState() {
        #expect(Set(Self.expected.keys) == Set(Self.events.map(\.name)))
        for (name, row) in Self.expected {
            #expect(Set(row.keys) == Set(Phase.allCases), "\(name)")
        }
    }

    @Test(arguments: Self.events, Phase.allCases)
    func everyEventInEveryState(_ event: Event, _ phase: Phase) throws {
        var fixture = Self.fixture(in: phase)
        let expected = try #require(Self.expected[event.name]?[phase])
        let answer = event.apply(&fixture)
        #expect(answer == expected.0, "\(event.name) in \(phase)")
        #expect(Self.phase(of: fixture.machine) == expected.1, "\(event.name) in \(phase)")
        // Ending is final, and nothing but the three ends is final.
        let ends: Set<Phase> = [.finished, .failed, .cancelled]
        #expect(fixture.machine.isEnded == ends.contains(expected.1))
    }

    /// Messages of a connection the download left (started over, or replaced) change nothing.
    @Test(arguments: Phase.allCases)
    func aStaleConnectionIsNotHeard(_ phase: Phase) {
        var fixture = Self.fixture(in: phase)
        let stale = Connection()
        #expect(!fixture.machine.isCurrent(stale))
        let startedOver = fixture.machine.startOver(after: stale)
        let resumed = fixture.machine.resumeAccepted(on: stale)
        #expect(!startedOver && !resumed)
        fixture.machine.entityAlreadyComplete(on: stale)
        fixture.machine.entityComesWhole(on: stale)
        #expect(fixture.machine.chooseFiles(for: stale) == nil)
        fixture.machine.filesReady(Files(), on: stale)
        #expect(fixture.machine.recordedFiles(on: stale) == nil)
        #expect(fixture.machine.dataArrived(on: stale) == nil)
        #expect(fixture.machine.verdict(onStatus: 404, on: stale) == nil)
        #expect(!fixture.machine.hearsChallengeCancellation(on: stale))
        let taken = fixture.machine.connectionFinished(stale)
        #expect(taken == nil)
        #expect(Self.phase(of: fixture.machine) == phase)
        #expect(fixture.machine.offset == (phase == .idle ? 0 : 4))
    }

    @Test func aNewDownloadAsksForTheWholeEntityAndCreatesItsFiles() {
        // Given a download that continues nothing and whose delegate has not chosen yet
        var machine = Machine(resuming: nil)
        let connection = Connection()
        let started = machine.start()
        #expect(started)
        #expect(machine.prepareRequest().map { if case .whole = $0 { true } else { false } } == true)
        let made = machine.connectionMade(connection)
        #expect(made)
        // When its response arrives without a destination, the download cannot save it
        if case .noDestination = machine.chooseFiles(for: connection) {
        } else {
            Issue.record("expected noDestination, got \(String(describing: machine.chooseFiles(for: connection)))")
        }
        // Once one is chosen, new files are made for it and the body goes there
        let set = machine.setDestination("/tmp/new", allowOverwrite: true)
        #expect(set)
        guard case .create(let destination) = machine.chooseFiles(for: connection) else {
            Issue.record("expected create, got \(String(describing: machine.chooseFiles(for: connection)))")
            return
        }
        #expect(destination.path == "/tmp/new" && destination.allowOverwrite)
        let files = Files()
        machine.filesReady(files, on: connection)
        #expect(machine.dataArrived(on: connection) === files)
        #expect(machine.recordedFiles(on: connection) === files)
        #expect(machine.isCurrent(connection))
        // A failure without a record removes the data and hands over nothing
        let failure = machine.fail()
        #expect(failure?.files === files && failure?.keepsFiles == false && failure?.resumeData == nil)
        #expect(machine.resumeData == nil && machine.files == nil)
    }

    @Test func onlyTheFirstDestinationIsTaken() {
        var machine = Machine(resuming: nil)
        let first = machine.setDestination("/tmp/first", allowOverwrite: false)
        let second = machine.setDestination("/tmp/second", allowOverwrite: true)
        #expect(first && !second)
        #expect(machine.destination?.path == "/tmp/first" && machine.destination?.allowOverwrite == false)
        // An ended download takes none.
        var ended = Machine(resuming: nil)
        _ = ended.cancel()
        let afterEnd = ended.setDestination("/tmp/late", allowOverwrite: false)
        #expect(!afterEnd && ended.destination == nil)
    }

    @Test func anErrorPageIsMissingUnlessErrorResponsesAreSaved() {
        var machine = Machine(resuming: nil)
        let connection = Connection()
        _ = machine.start()
        _ = machine.connectionMade(connection)
        // No status (file:, ftp:, data:), success, redirects kept by the delegate: saved.
        for status in [nil, 200, 204, 302, 399] as [Int?] {
            #expect(machine.verdict(onStatus: status, on: connection) == .save, "\(String(describing: status))")
        }
        for status in [400, 401, 404, 410, 500, 503] {
            #expect(machine.verdict(onStatus: status, on: connection) == .missing(statusCode: status))
        }
        machine.saveErrorResponses(true)
        #expect(machine.verdict(onStatus: 404, on: connection) == .save)
    }

    @Test func aChallengeIsCancelledToTheDelegateOnlyFromTheConnectionThatLoads() {
        var fixture = Self.fixture(in: .receiving)
        let other = Connection()
        #expect(fixture.machine.hearsChallengeCancellation(on: fixture.connection))
        #expect(!fixture.machine.hearsChallengeCancellation(on: other))
        _ = fixture.machine.cancel()
        #expect(fixture.machine.hearsChallengeCancellation(on: fixture.connection))
        #expect(!fixture.machine.hearsChallengeCancellation(on: other))
        // A download that failed (or finished) hears nothing more.
        var failed = Self.fixture(in: .receiving)
        _ = failed.machine.fail()
        #expect(!failed.machine.hearsChallengeCancellation(on: failed.connection))
    }

    @Test func aResumedDownloadAsksFromItsPartialDataUntilTheServerCannotContinue() {
        // Given a resumed download whose partial file holds 4 bytes
        var fixture = Self.fixture(in: .awaitingResponse)
        #expect(fixture.machine.offset == 4)
        #expect(fixture.machine.record == Self.record)
        #expect(fixture.machine.destination?.path == Self.record.destinationPath)
        // When the server cannot continue from there
        let startedOver = fixture.machine.startOver(after: fixture.connection)
        #expect(startedOver)
        // Then the whole entity is asked for, never again from the partial data's end
        #expect(fixture.machine.offset == -1)
        #expect(fixture.machine.prepareRequest().map { if case .whole = $0 { true } else { false } } == true)
        let next = Connection()
        let made = fixture.machine.connectionMade(next)
        #expect(made)
        #expect(!fixture.machine.isCurrent(fixture.connection) && fixture.machine.isCurrent(next))
        // and the partial data is emptied for it
        guard case .restart(let files) = fixture.machine.chooseFiles(for: next) else {
            Issue.record("expected restart, got \(String(describing: fixture.machine.chooseFiles(for: next)))")
            return
        }
        #expect(files === fixture.files)
    }

    @Test func anAlreadyCompleteEntityIgnoresItsBodyAndCommitsThePartialData() {
        var fixture = Self.fixture(in: .alreadyComplete)
        #expect(fixture.machine.dataArrived(on: fixture.connection) == nil)
        fixture.machine.decode(with: .gzip)
        let taken = fixture.machine.connectionFinished(fixture.connection)
        #expect(taken?.files === fixture.files && taken?.decoding == .gzip)
        // The files are the shell's while committed: a cancel meanwhile does not hand them out
        #expect(fixture.machine.files == nil)
        #expect(fixture.machine.commitMayFinish())
        fixture.machine.committed()
        #expect(fixture.machine.state.isFinished)
        // A saved download is not continued
        #expect(fixture.machine.record == nil)
    }

    @Test func aCommitThatFailsGivesTheFilesBackToTheFailure() {
        // Given data that was synced but cannot be moved into place
        var fixture = Self.fixture(in: .committing)
        fixture.machine.commitFailed(fixture.files, undecodable: false)
        // Then the failure keeps it to continue
        let failure = fixture.machine.fail()
        #expect(failure?.files === fixture.files && failure?.keepsFiles == true)
        #expect(failure?.resumeData == Self.record.encoded())
        #expect(fixture.machine.resumeData == Self.record.encoded())

        // Data that arrived whole but cannot be decoded is not worth continuing
        var undecodable = Self.fixture(in: .committing)
        undecodable.machine.commitFailed(undecodable.files, undecodable: true)
        let removed = undecodable.machine.fail()
        #expect(removed?.files === undecodable.files && removed?.keepsFiles == false && removed?.resumeData == nil)
    }

    @Test func aCancelDuringTheCommitWins() {
        var fixture = Self.fixture(in: .committing)
        let cancellation = fixture.machine.cancel()
        #expect(cancellation?.files == nil && cancellation?.record == Self.record)
        // The shell then removes the data instead of moving it into place
        #expect(!fixture.machine.commitMayFinish())
        fixture.machine.committed()
        #expect(Self.phase(of: fixture.machine) == .cancelled)
    }

    @Test func deletesFileUponFailureRemovesThePartialData() {
        var fixture = Self.fixture(in: .receiving)
        fixture.machine.deleteFileUponFailure(true)
        let failure = fixture.machine.fail()
        #expect(failure?.files === fixture.files && failure?.keepsFiles == false && failure?.resumeData == nil)
        #expect(fixture.machine.resumeData == nil)
    }

    @Test func theRecordFollowsTheResponseAndEndsWithTheDownload() {
        var fixture = Self.fixture(in: .receiving)
        fixture.machine.setRecord(nil)
        #expect(fixture.machine.record == nil)
        // Without a record the partial data is not kept on failure
        let failure = fixture.machine.fail()
        #expect(failure?.keepsFiles == false)
        // Once ended the record no longer changes
        fixture.machine.setRecord(Self.record)
        #expect(fixture.machine.record == nil)
    }

    @Test func cancellingHandsOverTheRecordOnce() {
        // Given a cancel before the start: the download never starts
        var early = Machine(resuming: nil)
        let cancelled = early.cancel()
        let started = early.start()
        #expect(cancelled != nil && !started)
        // A cancel hands over the connection, files and record once
        var fixture = Self.fixture(in: .receiving)
        let cancellation = fixture.machine.cancel()
        #expect(cancellation?.connection === fixture.connection && cancellation?.files === fixture.files)
        #expect(cancellation?.record == Self.record)
        let cancelledAgain = fixture.machine.cancel()
        let failedAfter = fixture.machine.fail()
        #expect(cancelledAgain == nil && failedAfter == nil)
        #expect(fixture.machine.resumeData == nil)
    }
}

extension DownloadStateMachine.State {
    fileprivate var isFinished: Bool {
        if case .finished = self { true } else { false }
    }
}
