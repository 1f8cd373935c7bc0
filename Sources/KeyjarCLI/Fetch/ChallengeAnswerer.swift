import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCommands
import KeyjarCore
import KeyjarLoader

/// How `keyjar fetch` answers a load's challenges, whether its body goes to standard output or
/// to a file: the `--user` credential (at the origin it was given for only), `-k` /
/// `--pinned-sha256` for a certificate that fails verification, else default handling (the
/// shared store). It remembers what happened, for the command's closing message. Used on the
/// load's one serial queue only.
final class ChallengeAnswerer {
    struct Options {
        var acceptUntrustedCertificate: Bool
        /// Trust a certificate that fails verification when its SHA-256 fingerprint is this one.
        var pinnedFingerprint: String?
        /// How long a pinned certificate stays trusted.
        var trustPersistence: URLCredential.Persistence
        /// Where the `--user` password may answer.
        var credentialScope: CredentialScope
    }

    private let options: Options
    let credential: FetchCredential?
    var credentialScope: CredentialScope { options.credentialScope }

    /// Where the `--user` credential was sent, and whether the server turned it down there.
    /// Keyjar's value type: Foundation on Linux compares URLProtectionSpace by identity.
    private(set) var answeredSpace: ProtectionSpace?
    private(set) var refused = false
    /// The last challenge nobody here answered (default handling had its go), for the message.
    private(set) var unanswered: UnansweredChallenge?
    /// The certificate that failed verification and was not accepted, for the message.
    private(set) var refusedCertificate: ServerTrust?

    struct UnansweredChallenge {
        var space: ProtectionSpace
        /// Whose stored credential had just failed there, if any.
        var failedUser: String?
    }

    init(options: Options, credential: FetchCredential?) {
        self.options = options
        self.credential = credential
    }

    func answer(_ challenge: URLAuthenticationChallenge) {
        guard let sender = challenge.sender else { return }
        let space = challenge.protectionSpace
        if let trustSpace = space as? ServerTrustProtectionSpace {
            // Any credential accepts this certificate for this host and port; without -k or a
            // matching --pinned-sha256 the default handling refuses it and the load fails.
            let leaf = trustSpace.serverTrust.leaf?.sha256Fingerprint
            if options.acceptUntrustedCertificate {
                sender.use(URLCredential(user: "", password: "", persistence: .none), for: challenge)
            } else if let pinned = options.pinnedFingerprint, pinned == leaf {
                sender.use(URLCredential(user: "", password: "", persistence: options.trustPersistence), for: challenge)
            } else {
                refusedCertificate = trustSpace.serverTrust
                sender.performDefaultHandling(for: challenge)
            }
            return
        }
        guard let credential, !space.isProxy(), ProtectionSpace(space).authenticationMethod.isHTTPChallenge,
            options.credentialScope.answers(ProtectionSpace(space))
        else {
            // The store answered first, if it could; default handling has nothing more.
            unanswered = UnansweredChallenge(
                space: ProtectionSpace(space),
                failedUser: challenge.previousFailureCount > 0 ? challenge.proposedCredential?.user : nil
            )
            return sender.performDefaultHandling(for: challenge)
        }
        if answeredSpace == ProtectionSpace(space) {
            // Asked again where the password was just sent: the server turned it down.
            refused = true
            return sender.continueWithoutCredential(for: challenge)
        }
        answeredSpace = ProtectionSpace(space)
        // Stored by the command once the load succeeded (with a clear error if it cannot be),
        // not by the loader's best-effort storage.
        sender.use(
            URLCredential(user: credential.user, password: credential.password, persistence: .none),
            for: challenge
        )
    }
}

/// Where a typed password answers and is kept: the scheme, host and port of the URL given, as
/// curl sends `-u` since CVE-2018-1000007 (by port and scheme since 7.83), so that a challenge
/// from anywhere else (a redirect to another host or port, or from https to http) is not
/// answered with it; with `--location-trusted`, wherever a redirect leads too. It is kept
/// (`--persistence permanent`) for that origin only, whatever answered. The one rule for
/// answering with it, hiding stored passwords in its favour, and keeping it.
struct CredentialScope: Equatable {
    /// The URL given's origin; nil when it has none (no host): then the password answers
    /// nothing and is kept nowhere.
    let origin: CredentialOrigin?
    /// `--location-trusted`.
    let followsRedirects: Bool

    init(url: URL, locationTrusted: Bool) {
        origin = CredentialOrigin(url)
        followsRedirects = locationTrusted
    }

    func answers(_ space: ProtectionSpace) -> Bool {
        !space.isProxy && (followsRedirects || keeps(space))
    }

    func keeps(_ space: ProtectionSpace) -> Bool { origin?.contains(space) ?? false }

    /// `scheme://host:port` of the URL given, for messages.
    var shown: String { origin?.shown ?? "the URL given" }
}

/// The scheme, host and port of a URL, as a challenge's protection space names them.
struct CredentialOrigin: Equatable {
    let space: ProtectionSpace

    init?(_ url: URL) {
        guard let scheme = url.scheme, let host = url.host(percentEncoded: false), !host.isEmpty else { return nil }
        space = ProtectionSpace(host: host, port: url.port, protocol: scheme)
    }

    func contains(_ challenged: ProtectionSpace) -> Bool {
        !challenged.isProxy && challenged.protocol == space.protocol && challenged.host == space.host
            && challenged.port == space.port
    }

    /// `scheme://host:port`, for messages.
    var shown: String {
        "\(space.protocol)://\(space.host.contains(":") ? "[\(space.host)]" : space.host):\(space.port)"
    }
}
