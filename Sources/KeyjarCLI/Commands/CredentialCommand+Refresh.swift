import ArgumentParser
import Foundation
import Keyjar
import KeyjarCommands
import KeyjarCore

extension CredentialCommand {
    /// `keyjar credential refresh`: a stored token made current through its token endpoint, as
    /// the loader and `git-credential get` do when they find it expired. The `keyjar` front,
    /// which links no loader, runs this in keyjar-full for `git-credential get`
    /// (``StoredTokenRefresh``).
    struct Refresh: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "refresh",
            abstract: "Refresh a stored token through its token endpoint, unless it is still valid.",
            discussion: """
                For a token stored with a refresh token and --token-endpoint. An expired token is \
                refreshed through keyjard, once for every process that asks at the same time: \
                when another refresh ends first, its token is kept. A token that is still valid \
                is left as it is unless --force asks for a new one now. Prints the user, the \
                server and when the token now expires; never the token.
                """
        )

        @OptionGroup var global: GlobalOptions
        @OptionGroup var space: SpaceOptions

        @Option(help: ArgumentHelp("The user name.", valueName: "name"))
        var user: String?

        @Flag(help: "Refresh the token even when it is still valid.")
        var force = false

        /// The space exactly as the options give it (no --realm: no realm), rather than as a
        /// filter: how `keyjar` names the one credential it found to keyjar-full.
        @Flag(help: .hidden)
        var exactSpace = false

        func validate() throws {
            guard space.url != nil else {
                throw ValidationError("Missing --url: the server whose token to refresh.")
            }
        }

        func run() throws {
            let client = try global.connect()
            let name = user ?? space.userFromURL
            var found = try records(client, matching: space, user: name)
            if exactSpace {
                let wanted = try space.exactSpace()
                found = found.filter { $0.space == wanted }
            }
            let record = try single(found, space, user: name)
            guard record.canRefresh else {
                throw CLIError.failure(
                    "the credential of \(record.user) at \(record.space.summary) cannot be refreshed: "
                        + "it needs a refresh token and a token endpoint (keyjar credential add --refresh-token-stdin "
                        + "--token-endpoint …), and must not be revoked."
                )
            }
            let whose = "\(record.user) at \(record.space.displayURL)"
            let expired = record.isExpired(at: Date().timeIntervalSince1970)
            if !expired && !force {
                Output.line("\(whose): still valid\(Self.expiry(record)); not refreshed (--force refreshes it).")
                return
            }
            guard let refresh = StoredTokenRefresh.installed else {
                throw CLIError.failure("this program cannot refresh tokens: run keyjar-full credential refresh.")
            }
            // A valid token is handed over as refused, so that keyjard does not answer with it.
            let current = expired ? nil : try client.password(user: record.user, for: record.space)
            try refresh(record, current, client)
            // The token is refreshed: a failure to read its new expiry only leaves it unsaid.
            let now = try? records(client, matching: space, user: record.user).first { $0.space == record.space }
            Output.line("\(whose): refreshed\(now.map(Self.expiry) ?? "").")
        }

        private static func expiry(_ record: CredentialRecord) -> String {
            record.expires.map { ", expires \(Output.time(Date(timeIntervalSince1970: $0)))" } ?? ""
        }
    }
}
