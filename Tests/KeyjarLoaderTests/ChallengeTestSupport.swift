import Foundation
import FoundationNetworking
import Glibc
import KeyjarLoader
import KeyjarLocks
import KeyjarTestSupport
import Synchronization
import Testing

/// How a test delegate answers a challenge.
enum TestAnswer: Sendable {
    case use(user: String, password: String, persistence: URLCredential.Persistence)
    case credential(URLCredential)
    case continueWithout, cancel, performDefault, reject
    /// Never answers: the load waits until it is cancelled.
    case hold
}

/// What a delegate saw of one challenge.
struct SeenChallenge: Sendable, Equatable {
    var method: String
    var realm: String?
    var host: String
    var port: Int = 0
    var isProxy: Bool
    var previousFailureCount: Int
    var proposedUser: String?
    var failureStatus: Int?
    var serverTrust: ServerTrust?
    var errorCode: URLError.Code?
    var hasError: Bool

    init(_ challenge: URLAuthenticationChallenge) {
        let space = challenge.protectionSpace
        method = space.authenticationMethod
        realm = space.realm
        host = space.host
        port = space.port
        isProxy = space.isProxy()
        previousFailureCount = challenge.previousFailureCount
        proposedUser = challenge.proposedCredential?.user
        failureStatus = (challenge.failureResponse as? HTTPURLResponse)?.statusCode
        serverTrust = (space as? ServerTrustProtectionSpace)?.serverTrust
        errorCode = (challenge.error as? URLError)?.code
        hasError = challenge.error != nil
    }

    /// The method without Foundation's prefix, for event lists.
    var shortMethod: String { method.replacingOccurrences(of: "NSURLAuthenticationMethod", with: "") }
}

/// A delegate with `willSendRequestFor`: answers challenges from a script, records the rest
/// (challenges and cancellations among the events) through an inner RecordingDelegate.
final class ChallengeDelegate: LoaderConnectionAuthenticationDelegate, @unchecked Sendable {
    // @unchecked: state is behind locks; `answers` is immutable.
    let recorder = RecordingDelegate()
    let seen = Locked<[SeenChallenge]>([])
    let held = Locked<[URLAuthenticationChallenge]>([])
    let shouldUseAsked = Atomic<Int>(0)
    private let answers: @Sendable (SeenChallenge) -> TestAnswer

    init(answers: @escaping @Sendable (SeenChallenge) -> TestAnswer) {
        self.answers = answers
    }

    var challenges: [SeenChallenge] { seen.withLock { $0 } }

    func connection(_ connection: LoaderConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
        answerTestChallenge(challenge, on: connection, seen: seen, recorder: recorder, answers: answers) { challenge in
            held.withLock { $0.append(challenge) }
        }
    }

    /// Never called for a delegate with `willSendRequestFor` (Apple's rule); counted to check.
    func connectionShouldUseCredentialStorage(_ connection: LoaderConnection) -> Bool {
        shouldUseAsked.add(1, ordering: .relaxed)
        return false
    }
    func connection(_ connection: LoaderConnection, didCancel challenge: URLAuthenticationChallenge) {
        recorder.record(.challengeCancelled)
    }
    func connection(
        _ connection: LoaderConnection,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        recorder.connection(connection, willSend: request, redirectResponse: redirectResponse)
    }
    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {
        recorder.connection(connection, didReceive: response)
    }
    func connection(_ connection: LoaderConnection, didReceive data: Data) {
        recorder.connection(connection, didReceive: data)
    }
    func connectionDidFinishLoading(_ connection: LoaderConnection) { recorder.connectionDidFinishLoading(connection) }
    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        recorder.connection(connection, didFailWithError: error)
    }
}

/// The older trio: refuses every space in `canAuthenticateAgainst` when told to, and says
/// whether the credential storage may be used.
final class LegacyDelegate: LoaderConnectionLegacyAuthenticationDelegate, @unchecked Sendable {
    let recorder = RecordingDelegate()
    let received = Atomic<Int>(0)
    let seen = Locked<[SeenChallenge]>([])
    let canAuthenticate: Bool
    let storageAllowed: Bool
    let persistence: URLCredential.Persistence
    let user: String

    init(
        canAuthenticate: Bool,
        storageAllowed: Bool = true,
        persistence: URLCredential.Persistence = .none,
        user: String = "alice"
    ) {
        self.canAuthenticate = canAuthenticate
        self.storageAllowed = storageAllowed
        self.persistence = persistence
        self.user = user
    }

    var challenges: [SeenChallenge] { seen.withLock { $0 } }

    func connectionShouldUseCredentialStorage(_ connection: LoaderConnection) -> Bool {
        recorder.record(.shouldUseCredentialStorage)
        return storageAllowed
    }
    func connection(_ connection: LoaderConnection, canAuthenticateAgainst protectionSpace: URLProtectionSpace) -> Bool
    { canAuthenticate }
    func connection(_ connection: LoaderConnection, didReceive challenge: URLAuthenticationChallenge) {
        received.add(1, ordering: .relaxed)
        let record = SeenChallenge(challenge)
        seen.withLock { $0.append(record) }
        recorder.record(
            .challenge(method: record.shortMethod, failures: record.previousFailureCount, proposed: record.proposedUser)
        )
        challenge.sender?.use(
            URLCredential(user: user, password: "wonderland", persistence: persistence),
            for: challenge
        )
    }
    func connection(_ connection: LoaderConnection, didCancel challenge: URLAuthenticationChallenge) {
        recorder.record(.challengeCancelled)
    }
    func connection(
        _ connection: LoaderConnection,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        recorder.connection(connection, willSend: request, redirectResponse: redirectResponse)
    }
    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {
        recorder.connection(connection, didReceive: response)
    }
    func connection(_ connection: LoaderConnection, didReceive data: Data) {
        recorder.connection(connection, didReceive: data)
    }
    func connectionDidFinishLoading(_ connection: LoaderConnection) { recorder.connectionDidFinishLoading(connection) }
    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        recorder.connection(connection, didFailWithError: error)
    }
}

/// The older trio with a script: says it can authenticate against the spaces whose method
/// `handles` names (server trust: every server's certificate is put to it), answers the
/// challenges from `answers`, and records the spaces it was asked about.
final class TrustCheckingDelegate: LoaderConnectionLegacyAuthenticationDelegate, @unchecked Sendable {
    let recorder = RecordingDelegate()
    let seen = Locked<[SeenChallenge]>([])
    let asked = Locked<[String]>([])
    private let handles: Set<String>
    private let answers: @Sendable (SeenChallenge) -> TestAnswer

    init(handles: Set<String>, answers: @escaping @Sendable (SeenChallenge) -> TestAnswer) {
        self.handles = handles
        self.answers = answers
    }

    var challenges: [SeenChallenge] { seen.withLock { $0 } }

    func connection(_ connection: LoaderConnection, canAuthenticateAgainst protectionSpace: URLProtectionSpace) -> Bool
    {
        asked.withLock { $0.append(protectionSpace.authenticationMethod) }
        return handles.contains(protectionSpace.authenticationMethod)
    }
    func connection(_ connection: LoaderConnection, didReceive challenge: URLAuthenticationChallenge) {
        answerTestChallenge(challenge, on: connection, seen: seen, recorder: recorder, answers: answers) { _ in }
    }
    func connection(_ connection: LoaderConnection, didCancel challenge: URLAuthenticationChallenge) {
        recorder.record(.challengeCancelled)
    }
    func connection(
        _ connection: LoaderConnection,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        recorder.connection(connection, willSend: request, redirectResponse: redirectResponse)
    }
    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {
        recorder.connection(connection, didReceive: response)
    }
    func connection(_ connection: LoaderConnection, didReceive data: Data) {
        recorder.connection(connection, didReceive: data)
    }
    func connectionDidFinishLoading(_ connection: LoaderConnection) { recorder.connectionDidFinishLoading(connection) }
    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        recorder.connection(connection, didFailWithError: error)
    }
}

/// What the test delegates do with a challenge, whichever method brings it: record it, then
/// answer as `answers` says (`hold` keeps a held one).
func answerTestChallenge(
    _ challenge: URLAuthenticationChallenge,
    on connection: LoaderConnection,
    seen: Locked<[SeenChallenge]>,
    recorder: RecordingDelegate,
    answers: (SeenChallenge) -> TestAnswer,
    hold: (URLAuthenticationChallenge) -> Void
) {
    let record = SeenChallenge(challenge)
    seen.withLock { $0.append(record) }
    recorder.record(
        .challenge(method: record.shortMethod, failures: record.previousFailureCount, proposed: record.proposedUser)
    )
    guard let sender = challenge.sender else {
        // Nobody could answer: the load would hang until the hang limit; say why now.
        Issue.record("a challenge without a sender")
        return connection.cancel()
    }
    switch answers(record) {
    case .use(let user, let password, let persistence):
        sender.use(URLCredential(user: user, password: password, persistence: persistence), for: challenge)
    case .credential(let credential): sender.use(credential, for: challenge)
    case .continueWithout: sender.continueWithoutCredential(for: challenge)
    case .cancel: sender.cancel(challenge)
    case .performDefault: sender.performDefaultHandling(for: challenge)
    case .reject: sender.rejectProtectionSpaceAndContinue(with: challenge)
    case .hold: hold(challenge)
    }
}
