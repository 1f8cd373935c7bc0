import Foundation
import FoundationNetworking
import Keyjar
import KeyjarLocks

/// What one load remembers of its challenges.
struct ChallengeMemory {
    /// Spaces the stored credential was already sent to: once per space, as Apple's default
    /// handling does, so a stored credential that fails is not sent again and again.
    var storedTried: Set<String> = []
    /// The credential the session delegate gave last, kept by its persistence once the
    /// response shows that it got past the challenge.
    var delegateGave: (space: URLProtectionSpace, credential: URLCredential)?
}

// Challenges as URLSession puts them: the session delegate first, then the stored credential.
// The loader reads no storage itself (`connectionShouldUseCredentialStorage` is false): a
// credential in the request's URL answers first, then every challenge comes here.
extension ProtocolLoad {
    func connection(_ connection: LoaderConnection, didReceive challenge: URLAuthenticationChallenge) {
        guard let sender = challenge.sender else {
            // The loader gives every challenge a sender; without one nobody could answer, and
            // the task would wait for ever.
            connection.cancel()
            return report(
                LoaderError.make(
                    .userCancelledAuthentication,
                    "A challenge came without a sender",
                    url: connection.currentRequest.url
                )
            )
        }
        guard let (session, task, delegate) = sessionDelegate else {
            return answerByDefault(challenge, sender: sender)
        }
        // The delegate is proposed what the storage would answer with, as URLSession does.
        let proposed = challenge.proposedCredential ?? proposedStoredCredential(for: challenge.protectionSpace)
        let asked = URLAuthenticationChallenge(
            protectionSpace: challenge.protectionSpace,
            proposedCredential: proposed,
            previousFailureCount: challenge.previousFailureCount,
            failureResponse: challenge.failureResponse,
            error: challenge.error,
            sender: sender
        )
        session.delegateQueue.addOperation {
            delegate.urlSession(session, task: task, didReceive: asked) { disposition, credential in
                switch disposition {
                case .useCredential:
                    guard let credential else { return sender.continueWithoutCredential(for: challenge) }
                    self.state.withLock { $0.challenges.delegateGave = (challenge.protectionSpace, credential) }
                    sender.use(credential, for: challenge)
                case .cancelAuthenticationChallenge:
                    sender.cancel(challenge)
                case .rejectProtectionSpace:
                    sender.rejectProtectionSpaceAndContinue(with: challenge)
                case .performDefaultHandling:
                    self.answerByDefault(challenge, sender: sender)
                @unknown default:
                    self.answerByDefault(challenge, sender: sender)
                }
            }
        }
    }

    /// URLSession's default handling: the stored credential for the space, once; else the
    /// challenge's response is the answer.
    private func answerByDefault(_ challenge: URLAuthenticationChallenge, sender: any URLAuthenticationChallengeSender)
    {
        let space = challenge.protectionSpace
        let key = Self.key(space)
        let untried = state.withLock { $0.challenges.storedTried.insert(key).inserted }
        if untried, let stored = loader?.configuration.credentialStorage?.defaultCredential(for: space) {
            sender.use(stored, for: challenge)
        } else {
            sender.continueWithoutCredential(for: challenge)
        }
    }

    private func proposedStoredCredential(for space: URLProtectionSpace) -> URLCredential? {
        guard let storage = loader?.configuration.credentialStorage else { return nil }
        if let shared = storage as? SharedCredentialStorage { return shared.proposedCredential(for: space) }
        return storage.defaultCredential(for: space)
    }

    /// The response got past authentication: the credential the delegate gave is kept by its
    /// persistence (`.none`: not at all), as URLSession keeps it in its credential storage.
    func keepDelegateCredential() {
        guard
            let (space, credential) = state.withLock({ state in
                defer { state.challenges.delegateGave = nil }
                return state.challenges.delegateGave
            }),
            credential.persistence != .none, let storage = loader?.configuration.credentialStorage
        else { return }
        if storage is SharedCredentialStorage {
            // keyjard makes a space's first credential its default; asking for the default
            // first would fetch a password for nothing. A failure goes to its failureLog.
            storage.set(credential, for: space)
        } else if storage.defaultCredential(for: space) == nil {
            storage.setDefaultCredential(credential, for: space)
        } else {
            storage.set(credential, for: space)
        }
    }

    /// A space by value (Foundation on Linux compares `URLProtectionSpace`s by identity).
    private static func key(_ space: URLProtectionSpace) -> String {
        [
            space.host, String(space.port), space.protocol ?? "", space.realm ?? "", space.authenticationMethod,
            space.proxyType ?? "",
        ].joined(separator: "\u{1F}")
    }
}
