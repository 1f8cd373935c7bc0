import ArgumentParser
import Foundation
import Glibc
import Keyjar
import KeyjarCodec
import KeyjarCommands
import KeyjarCore
import KeyjarLibSecret
import KeyjarPlatform

extension CredentialCommand {
    /// `keyjar credential import --from SOURCE [FILE]`: the credentials another store keeps.
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import",
            abstract: "Import the credentials git, curl or another Secret Service application already stored.",
            discussion: """
                --from git-credential-libsecret: git's libsecret helper's items (schema \
                org.git.Password) in the Secret Service, with a token's expiry and refresh token \
                (git 2.47). The repository path (attribute object) is ignored: Keyjar keeps \
                credentials per server. Items that are no http or https credential (a client \
                certificate's passphrase, protocol cert; git send-email's smtp) are skipped.

                --from git-store [FILE]: git's credential-store file (default: ~/.git-credentials \
                and $XDG_CONFIG_HOME/git/credentials, those that exist, in git's order).

                --from netrc [FILE]: a .netrc (default: $NETRC, else ~/.netrc). A machine answers \
                every scheme and port of its host, as with curl --netrc; the default entry answers \
                every server and is imported only with --include-default; macdef is skipped.

                --from secret-tool --schema NAME: items stored with `secret-tool store xdg:schema \
                NAME …` that have a server and a user attribute (protocol and port optional; \
                without a protocol, every scheme and port of the server).

                A credential for every scheme (a .netrc entry, a secret-tool item without a \
                protocol) goes over an unencrypted scheme (http, ftp) only to this machine, so \
                that a link or a redirect to http cannot read it off the network; \
                --allow-unencrypted lets it go in clear to its other hosts too, as curl --netrc \
                does. The import says which credentials are limited so.

                Each credential is added, updated, left unchanged, or left as it is when Keyjar \
                already stores a different password for it (--replace replaces it); the first of \
                duplicates counts, as in curl and git. Every credential is printed with what \
                happened to it, never its password. All are stored in one transaction: a bad \
                line, an unreadable file or a locked keyring imports nothing. The source is only \
                read, never changed.

                Examples:
                  keyjar credential import --from git-credential-libsecret --dry-run
                  keyjar credential import --from git-store
                  keyjar credential import --from netrc ~/.netrc --include-default
                  keyjar credential import --from secret-tool --schema org.example.Pw
                """
        )

        enum Source: String, ExpressibleByArgument, CaseIterable {
            case gitCredentialLibsecret = "git-credential-libsecret"
            case gitStore = "git-store"
            case netrc
            case secretTool = "secret-tool"
        }

        @OptionGroup var global: GlobalOptions

        @Option(help: ArgumentHelp("Where the credentials are.", valueName: "source"))
        var from: Source

        @Argument(help: ArgumentHelp("The file of git-store or netrc (default: see above).", valueName: "file"))
        var file: String?

        @Option(help: ArgumentHelp("The schema of the secret-tool items.", valueName: "name"))
        var schema: String?

        @Flag(help: "Import a netrc default entry too, as a credential for every server.")
        var includeDefault = false

        @Flag(
            help:
                "Let a credential for every scheme (a .netrc entry, a secret-tool item without a protocol) go over http and ftp to other machines too, unencrypted."
        )
        var allowUnencrypted = false

        @Flag(help: "Replace a stored credential whose password differs (otherwise it is left).")
        var replace = false

        @Flag(help: "Only print what the import would do.")
        var dryRun = false

        func validate() throws {
            if file != nil, from != .gitStore, from != .netrc {
                throw ValidationError("A file is read only --from git-store or --from netrc.")
            }
            if from == .secretTool {
                guard let schema, !schema.isEmpty else {
                    throw ValidationError("--from secret-tool needs --schema NAME: the xdg:schema of the items.")
                }
                if schema == "org.keyjar.Credential" || schema == "org.keyjar.RefreshToken" {
                    throw ValidationError("\(schema) is Keyjar's own schema: its items are already Keyjar's.")
                }
            } else if schema != nil {
                throw ValidationError("--schema goes with --from secret-tool.")
            }
            if includeDefault, from != .netrc {
                throw ValidationError("--include-default goes with --from netrc.")
            }
            if allowUnencrypted, from != .netrc, from != .secretTool {
                throw ValidationError(
                    "--allow-unencrypted goes with --from netrc or secret-tool (their credentials for every scheme)."
                )
            }
        }

        func run() throws {
            // Everything is read and checked before keyjard is asked anything: bad input imports nothing.
            let found = try read()
            let client = try global.connect()
            let candidates = found.compactMap(\.candidate)
            let plan = CredentialImportPlan(
                candidates: candidates,
                stored: try stored(for: candidates, client),
                replace: replace,
                now: Date().timeIntervalSince1970
            )
            // A credential for every scheme imported the other way (with or without
            // --allow-unencrypted) is the same one: this import decides how far it goes.
            let replaced = try Self.otherWildcards(of: candidates, client)
            var outcomes = plan.entries.makeIterator()
            var counts: [String: Int] = [:]
            var lines: [String] = []
            for item in found {
                var (verb, note): (String, String)
                if let candidate = item.candidate, let entry = outcomes.next() {
                    (verb, note) = Self.words(for: entry.outcome, dryRun: dryRun)
                    if replaced.contains(where: { $0.user == candidate.user && $0.space.host == candidate.space.host })
                    {
                        note = [
                            note,
                            "replaces the one imported \(candidate.space.goesInClearToo ? "without" : "with") --allow-unencrypted",
                        ]
                        .filter { !$0.isEmpty }.joined(separator: "; ")
                    }
                } else {
                    (verb, note) = (dryRun ? "would skip" : "skipped", item.skipped ?? "")
                }
                counts[verb, default: 0] += 1
                let extra = [note, item.note].filter { !$0.isEmpty }.joined(separator: "; ")
                lines.append("\(verb) \(item.name)\(extra.isEmpty ? "" : " (\(extra))")")
            }
            let writes = plan.writes
            // Stored before anything is said to be: a failed save prints only its error.
            if !dryRun, !writes.isEmpty { try client.saveCredentials(writes) }
            if !dryRun {
                for record in replaced { try client.removeCredential(user: record.user, for: record.space) }
            }
            for line in lines { Output.line(line) }
            let summary = counts.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
            Output.line(
                found.isEmpty
                    ? "nothing to import"
                    : "\(summary)\(dryRun ? " (dry run: nothing was stored)" : "")"
            )
        }

        /// The stored credentials for every scheme of the candidates' hosts and users that go
        /// the other way in clear (one imported with --allow-unencrypted, and this import without,
        /// or the reverse).
        static func otherWildcards(
            of candidates: [CredentialImportCandidate],
            _ client: KeyjarClient
        ) throws -> [CredentialRecord] {
            let wildcards = candidates.filter(\.space.isWildcard)
            guard !wildcards.isEmpty else { return [] }
            return try client.credentialRecords().filter { record in
                record.space.isWildcard
                    && wildcards.contains {
                        $0.user == record.user && $0.space.host == record.space.host
                            && $0.space.goesInClearToo != record.space.goesInClearToo
                    }
            }
        }

        /// What the output says of an outcome: its verb and, for some, why.
        static func words(for outcome: CredentialImportPlan.Outcome, dryRun: Bool) -> (String, String) {
            switch outcome {
            case .added: (dryRun ? "would add" : "added", "")
            case .updated: (dryRun ? "would update" : "updated", "")
            case .unchanged: ("unchanged", "")
            case .left: ("left", "a different password is stored; --replace replaces it")
            case .duplicate(let origin): (dryRun ? "would skip" : "skipped", "a duplicate of \(origin)")
            case .expired: (dryRun ? "would skip" : "skipped", "expired")
            }
        }

        /// What Keyjar stores under the candidates' spaces and users: their passwords and token
        /// metadata (an update keeps what the source lacks), read only for those (never listed).
        private func stored(
            for candidates: [CredentialImportCandidate],
            _ client: KeyjarClient
        ) throws -> [CredentialImportPlan.Key: StoredCredentialSecrets] {
            let wanted = Set(candidates.map { CredentialImportPlan.Key(space: $0.space, user: $0.user) })
            var stored: [CredentialImportPlan.Key: StoredCredentialSecrets] = [:]
            for record in try client.credentialRecords() {
                let key = CredentialImportPlan.Key(space: record.space, user: record.user)
                guard wanted.contains(key), stored[key] == nil else { continue }
                // A record whose password is gone (`keyjar credential repair`) is replaced like a new one.
                guard let password = try client.password(user: record.user, for: record.space) else { continue }
                stored[key] = StoredCredentialSecrets(
                    password: password,
                    expires: record.expires,
                    refreshToken: record.hasRefreshToken
                        ? try client.refreshToken(user: record.user, for: record.space) : nil,
                    tokenRefresh: record.tokenRefresh
                )
            }
            return stored
        }

        /// A space as the import shows it: wildcards in words.
        static func describe(_ space: ProtectionSpace) -> String {
            if space.isEveryServer { return "every server" }
            if space.isWildcard { return "any scheme and port of \(space.host)" }
            return space.displayURL
        }

        /// What the import says of a credential for every scheme: where it will not go, and why.
        static func limit(of space: ProtectionSpace) -> String {
            guard space.isWildcard else { return "" }
            return space.goesInClearToo
                ? "unencrypted too, as asked (--allow-unencrypted)"
                : "over http or ftp only to this machine, never in clear over the network; --allow-unencrypted allows it"
        }
    }
}
