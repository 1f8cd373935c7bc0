import ArgumentParser
import Foundation
import Keyjar
import KeyjarCodec
import KeyjarCommands
import KeyjarCore

/// `keyjar watch`: every change notification, as it happens.
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print every change to the shared store as it happens, until interrupted.",
        discussion: """
            One line per notification: its sequence number, what changed and why (cookies added, \
            replaced or removed with the cause; the policy; credentials, never their passwords). With \
            --json, one JSON object a line: {"sequence", "notification", "event"}. Once it is \
            subscribed, keyjar says so on standard error. If keyjard restarts, watching resumes \
            without missing a change.

            Examples:
              keyjar watch
              keyjar watch --json | jq -c 'select(.notification | test("Cookie"))'
            """
    )

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print JSON lines.")
    var json = false

    @Option(help: ArgumentHelp("Stop after this many notifications.", valueName: "count"))
    var count: Int?

    func validate() throws {
        if let count, count < 1 { throw ValidationError("--count must be at least 1.") }
    }

    func run() async throws {
        let client = try global.connect(keepingReplica: true)
        let changes = client.changes()
        Output.error("watching \(client.configuration.socketPath) from sequence \(client.sequence) (Ctrl-C to stop)")
        var seen = 0
        for await change in changes {
            // A change names servers' cookies: shown without their control characters.
            try Output.flushedLine(json ? Self.jsonLine(change) : TerminalText.safe(Self.line(change)))
            seen += 1
            if let count, seen >= count { return }
        }
    }

    static func jsonLine(_ change: SequencedEvent) -> String {
        #"{"sequence":\#(change.sequence),"notification":"\#(change.event.notificationName)","event":\#(StoreEventJSON.encode(change.event))}"#
    }

    /// At most this many cookie changes are spelled out; an import can make thousands.
    static let shownChanges = 5

    static func line(_ change: SequencedEvent) -> String {
        let what: String
        switch change.event {
        case .cookies(let changes):
            var parts = changes.prefix(shownChanges).map { change -> String in
                switch change {
                case .added(let cookie): "added \(name(cookie))"
                case .replaced(_, let cookie): "replaced \(name(cookie))"
                case .removed(let cookie, let cause): "removed \(name(cookie)) (\(Self.words(cause)))"
                }
            }
            if changes.count > shownChanges { parts.append("and \(changes.count - shownChanges) more") }
            what = "cookies: " + parts.joined(separator: ", ")
        case .policy(let policy):
            let rules = policy.domainRules.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.argumentName)" }
            what =
                "policy: \(AcceptPolicyArgument(policy.acceptPolicy).rawValue)"
                + (rules.isEmpty ? "" : "; rules: " + rules.joined(separator: ", "))
        case .credentials(let changes):
            what =
                "credentials: "
                + changes.map { "\(Self.words($0.kind)) \($0.user) for \($0.space.summary)" }.joined(separator: ", ")
        }
        return "\(change.sequence) \(what)"
    }

    /// Why a cookie went, in words (the wire's names are for programs: `--json`).
    static func words(_ cause: CookieRemovalCause) -> String {
        switch cause {
        case .deleted: "deleted"
        case .expired: "expired"
        case .evicted: "evicted to make room"
        case .sessionEnded: "the session ended"
        }
    }

    static func words(_ kind: CredentialChange.Kind) -> String {
        switch kind {
        case .added: "added"
        case .updated: "updated"
        case .removed: "removed"
        case .defaultChanged: "made default"
        }
    }

    private static func name(_ cookie: Cookie) -> String {
        "\(cookie.name) for \(cookie.hostOnly ? "" : ".")\(cookie.domain)\(cookie.path)"
    }
}
