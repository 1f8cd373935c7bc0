import Foundation
import FoundationNetworking

/// What a connection knows about authentication across its attempts.
struct AuthenticationState {
    mutating func redirected() {}
}

extension LoaderConnection {
    func prepareAuthentication(_ request: inout TransferRequest, names: Set<String>) {}

    func isChallengeWeAnswer(_ head: ResponseHead) -> Bool { false }

    func answerChallenge(_ head: ResponseHead, response: HTTPURLResponse, body: Data) {
        deliverFinal(response, body: body)
    }

    func authenticationSucceeded() {}

    func cancelPendingChallenge() {}

    func handleCertificateFailure(_ result: CurlResult, url: URL) -> Bool { false }
}
