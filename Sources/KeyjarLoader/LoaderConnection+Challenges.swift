import Foundation
import FoundationNetworking
import KeyjarCore
import KeyjarTransfer
import Synchronization

/// A challenge waiting for its answer, and what it was about.
struct PendingChallenge {
    enum Kind {
        /// The server's certificate, shown to a delegate that checks every one, or because it
        /// failed verification (then with the error default handling fails the load with).
        case serverTrust(ServerTrust, URLError?)
        /// The server asked for a client certificate and refused the load without an
        /// acceptable one.
        case clientCertificate(ProtectionSpace, URLError)
        /// A 401 or 407 with the response (and body) to deliver if nobody answers.
        case http(HTTPChallengeContext)
    }

    let kind: Kind
    let challenge: URLAuthenticationChallenge
}

extension LoaderConnection {
    /// Puts a challenge to the delegate (``DelegateChannel/present(_:to:)``), else to default
    /// handling. The load waits for the answer.
    func present(
        _ kind: PendingChallenge.Kind,
        space: URLProtectionSpace,
        proposedCredential: URLCredential?,
        previousFailureCount: Int,
        failureResponse: URLResponse?,
        error: (any Error)?
    ) {
        let sender = ChallengeSender(connection: self, number: machine.nextChallengeNumber())
        let challenge = URLAuthenticationChallenge(
            protectionSpace: space,
            proposedCredential: proposedCredential,
            previousFailureCount: previousFailureCount,
            failureResponse: failureResponse,
            error: error,
            sender: sender
        )
        machine.challengePresented(PendingChallenge(kind: kind, challenge: challenge), number: sender.number)
        if !channel.present(challenge, to: self) { resolveChallenge(sender.number, .performDefaultHandling) }
    }

    /// The answer to challenge `number` (later answers and answers after the load ended are
    /// ignored).
    func resolveChallenge(_ number: Int, _ disposition: ChallengeDisposition) {
        guard let pending = machine.challengeResolved(number) else { return }
        switch pending.kind {
        case .serverTrust(let trust, let error):
            resolveServerTrust(pending.challenge, trust: trust, error: error, disposition)
        case .clientCertificate(let space, let error):
            resolveClientCertificate(pending.challenge, space: space, error: error, disposition)
        case .http(let context):
            resolveHTTPChallenge(pending.challenge, context: context, disposition)
        }
    }

    /// The connection was cancelled: a challenge the delegate holds is cancelled with it, and
    /// the delegate is told so (even though it hears nothing else after `cancel()`).
    func cancelPendingChallenge() {
        guard let pending = machine.challengeCancelled() else { return }
        deliverCancellation(of: pending.challenge, evenAfterCancel: true)
    }

    /// `didCancel` for a challenge the delegate was given.
    func deliverCancellation(of challenge: URLAuthenticationChallenge, evenAfterCancel: Bool = false) {
        channel.deliver(evenAfterCancel: evenAfterCancel) { $0.connection(self, didCancel: challenge) }
    }
}
