import Foundation
import FoundationNetworking
import Synchronization

/// A challenge waiting for its answer, and what it was about.
struct PendingChallenge {
    enum Kind {
        /// The server's certificate failed verification.
        case serverTrust(URLError)
        /// A 401 or 407 with the response (and body) to deliver if nobody answers.
        case http(HTTPChallengeContext)
    }

    let number: Int
    let kind: Kind
    let challenge: URLAuthenticationChallenge
}

extension LoaderConnection {
    /// Puts a challenge to the delegate the way Apple's loader does: `willSendRequestFor` if
    /// the delegate has it; else the older trio (`canAuthenticateAgainst` then
    /// `didReceive challenge`); else default handling. The load waits for the answer.
    func present(_ kind: PendingChallenge.Kind, space: URLProtectionSpace, proposedCredential: URLCredential?,
                 previousFailureCount: Int, failureResponse: URLResponse?, error: (any Error)?) {
        challengeCounter += 1
        let sender = ChallengeSender(connection: self, number: challengeCounter)
        let challenge = URLAuthenticationChallenge(
            protectionSpace: space, proposedCredential: proposedCredential, previousFailureCount: previousFailureCount,
            failureResponse: failureResponse, error: error, sender: sender)
        pendingChallenge = PendingChallenge(number: sender.number, kind: kind, challenge: challenge)
        switch delegate {
        case let delegate as any LoaderConnectionAuthenticationDelegate:
            deliver { _ in delegate.connection(self, willSendRequestFor: challenge) }
        case let delegate as any LoaderConnectionLegacyAuthenticationDelegate:
            deliver { _ in
                if delegate.connection(self, canAuthenticateAgainst: space) {
                    delegate.connection(self, didReceive: challenge)
                } else {
                    sender.performDefaultHandling(for: challenge)
                }
            }
        default:
            resolveChallenge(sender.number, .performDefaultHandling)
        }
    }

    /// The answer to challenge `number` (later answers and answers after the load ended are
    /// ignored).
    func resolveChallenge(_ number: Int, _ disposition: ChallengeDisposition) {
        guard !ended, let pending = pendingChallenge, pending.number == number else { return }
        pendingChallenge = nil
        switch pending.kind {
        case .serverTrust(let error):
            resolveServerTrust(pending.challenge, error: error, disposition)
        case .http(let context):
            resolveHTTPChallenge(pending.challenge, context: context, disposition)
        }
    }

    func cancelPendingChallenge() {
        pendingChallenge = nil
    }

    // MARK: Server trust

    /// A failed certificate verification becomes a server-trust challenge the delegate may
    /// accept for that host (by answering with any credential); by default it fails.
    func handleCertificateFailure(_ result: CurlResult, url: URL) -> Bool {
        guard LoaderError.code(for: result) == .serverCertificateUntrusted, url.scheme?.lowercased() == "https" else { return false }
        let error = LoaderError.make(for: result, url: url)
        let space = URLProtectionSpace(
            host: url.host ?? "", port: url.port ?? 443, protocol: "https", realm: nil,
            authenticationMethod: LoaderAuthenticationMethod.serverTrust)
        present(.serverTrust(error), space: space, proposedCredential: nil, previousFailureCount: 0, failureResponse: nil, error: error)
        return true
    }

    private func resolveServerTrust(_ challenge: URLAuthenticationChallenge, error: URLError, _ disposition: ChallengeDisposition) {
        switch disposition {
        case .use:
            guard let url = currentRequest.url else { return fail(error) }
            let key = Self.hostKey(url)
            loader.memory.withLock { _ = $0.trustedHosts.insert(key) }
            startAttempt()
        case .cancel:
            fail(LoaderError.make(.userCancelledAuthentication, "The server-trust challenge was cancelled", url: currentRequest.url, underlying: error))
        case .continueWithoutCredential, .performDefaultHandling, .rejectProtectionSpace:
            fail(error)
        }
    }
}
