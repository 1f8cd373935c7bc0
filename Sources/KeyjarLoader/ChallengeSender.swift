import Foundation
import FoundationNetworking

/// What a delegate (or default handling) decided about a challenge.
enum ChallengeDisposition: Sendable {
    case use(URLCredential)
    case continueWithoutCredential
    case cancel
    case performDefaultHandling
    case rejectProtectionSpace
}

/// The sender a challenge carries: whatever the delegate tells it, on whatever thread, goes
/// back to the connection's queue; only the first answer counts. It holds the connection, so
/// a load waiting for an answer stays alive.
final class ChallengeSender: NSObject, URLAuthenticationChallengeSender, @unchecked Sendable {
    // @unchecked: both stored properties are immutable.
    private let connection: LoaderConnection
    let number: Int

    init(connection: LoaderConnection, number: Int) {
        self.connection = connection
        self.number = number
    }

    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) { answer(.use(credential)) }
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) { answer(.continueWithoutCredential) }
    func cancel(_ challenge: URLAuthenticationChallenge) { answer(.cancel) }
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) { answer(.performDefaultHandling) }
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) { answer(.rejectProtectionSpace) }

    private func answer(_ disposition: ChallengeDisposition) {
        let connection = connection
        let number = number
        connection.schedule { connection.resolveChallenge(number, disposition) }
    }
}
