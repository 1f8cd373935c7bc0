import ArgumentParser
import Foundation
import FoundationNetworking
import Glibc
import Keyjar
import KeyjarCommands
import KeyjarCore
import KeyjarIdentity
import KeyjarLoader
import KeyjarLocks
import Synchronization

/// After the load: its outcome told to the user, and a credential the user typed stored as asked.
extension FetchCommand {
    func finish(_ outcome: FetchOutcome, answerer: ChallengeAnswerer, client: KeyjarClient) throws {
        let credential = answerer.credential
        guard case .finished(let status) = outcome else {
            if let trust = answerer.refusedCertificate, let leaf = trust.leaf {
                throw CLIError.failure(
                    "the certificate of \(trust.host):\(trust.port) is not trusted (\(trust.failureReason)).\n"
                        + "  subject: \(leaf.subject)\n  issuer: \(leaf.issuer)\n"
                        + "  valid: \(leaf.notValidBefore.formatted(.iso8601)) to \(leaf.notValidAfter.formatted(.iso8601))\n"
                        + "  SHA-256: \(leaf.sha256Fingerprint)\n"
                        + (pinnedSHA256 == nil
                            ? ""
                            : "It is not the certificate --pinned-sha256 names: the host presents another one (renewed, or not the server you pinned).\n")
                        + "If you trust it, run again with --pinned-sha256 \(leaf.sha256Fingerprint.replacingOccurrences(of: ":", with: ""))"
                        + " (add --persistence permanent to keep trusting it)."
                )
            }
            if case .failed(let error) = outcome { throw error }
            return
        }
        if let credential, answerer.refused {
            throw CLIError.failure(
                "the server refused the password for \(credential.user) (HTTP \(status.map(String.init) ?? "?")); nothing was stored."
            )
        }
        let scope = answerer.credentialScope
        if let credential, let space = answerer.answeredSpace, credential.persistence == .permanent {
            // Kept for the URL given only, even when --location-trusted sent it further.
            if scope.keeps(space) {
                try store(credential, in: space, client: client)
            } else {
                Output.error(
                    "the password for \(credential.user) was accepted at \(space.summary), not at \(scope.shown), the URL given: not stored."
                )
            }
        }
        if status == 401, let credential, let challenge = answerer.unanswered, !scope.answers(challenge.space) {
            let realm = challenge.space.realm.map { " (realm \"\($0)\")" } ?? ""
            throw CLIError.failure(
                "\(challenge.space.protocol)://\(challenge.space.host):\(challenge.space.port) asks for a password\(realm);"
                    + " the password for \(credential.user) goes only to \(scope.shown), the URL given,"
                    + " and was not sent (--location-trusted sends it wherever a redirect leads)."
            )
        }
        if status == 401 || status == 407, credential == nil, let challenge = answerer.unanswered {
            // As curl does, the body went out; the status says the load did not get through.
            let asker = challenge.space.isProxy ? "the proxy" : "the server"
            let realm = challenge.space.realm.map { " (realm \"\($0)\")" } ?? ""
            if challenge.space.authenticationMethod == .httpBearer {
                let server = "\(challenge.space.protocol)://\(challenge.space.host):\(challenge.space.port)"
                let refused = challenge.failedUser.map { "refused the stored token for \($0)\(realm)" }
                throw CLIError.failure(
                    "\(asker) \(refused ?? "asks for a bearer token\(realm) and no usable one is stored for it"); "
                        + "store one with `keyjar credential add --url \(server) --token-stdin`."
                )
            }
            if let user = challenge.failedUser {
                throw CLIError.failure(
                    "\(asker) refused the stored password for \(user)\(realm); store the new one with `keyjar credential add`, or pass --user NAME."
                )
            }
            throw CLIError.failure("\(asker) asks for a password\(realm) and none is stored for it; pass --user NAME.")
        }
    }

    /// Keeps the accepted password in the shared store: in the user's credential that answers
    /// there (the one that just failed, say), else in the challenge's space. keyjard makes a
    /// space's first credential its default, so later loads (and every other program) use it
    /// without asking.
    func store(_ credential: FetchCredential, in challenged: ProtectionSpace, client: KeyjarClient) throws {
        let space = try client.credentialCandidates(for: challenged)
            .space(forStoring: credential.user, challengedAt: challenged)
        try client.setCredential(user: credential.user, password: credential.password, for: space)
        Output.error("stored the password for \(credential.user) at \(space.summary).")
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }
}
