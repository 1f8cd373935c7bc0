import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLoader

/// The password given with `--user`, and how long to keep it once the server accepted it.
struct FetchCredential: Sendable {
    var user: String
    var password: String
    var persistence: URLCredential.Persistence
}

/// How a fetch ended, for the command to report.
enum FetchOutcome: Sendable {
    /// The load finished; `response` is the last one delivered (nil for none).
    case finished(status: Int?)
    case failed(CLIError)
}

/// Receives one `keyjar fetch` load: writes the head (with `-i`) and body to the destination,
/// draws the progress meter, and answers challenges with the `--user` credential or the shared
/// store. Everything runs on the one serial queue given to the connection, the signal sources
/// and the time limit, so its state needs no lock.
final class FetchDelegate: LoaderConnectionAuthenticationDelegate, @unchecked Sendable {
    struct Options {
        var includeHead: Bool
        var failOnHTTPError: Bool
        var followRedirects: Bool
        var acceptUntrustedCertificate: Bool
        /// Trust a certificate that fails verification when its SHA-256 fingerprint is this one.
        var pinnedFingerprint: String?
        /// How long a pinned certificate stays trusted.
        var trustPersistence: URLCredential.Persistence
        var showProgress: Bool
    }

    let queue: DispatchQueue
    private let options: Options
    private let destination: BodyDestination
    private let credential: FetchCredential?
    private var meter: ProgressMeter?
    private var completion: (@Sendable (FetchOutcome) -> Void)?

    /// Ctrl-C and friends cancel the load; kept here for as long as the load runs.
    var signalSources: [any DispatchSourceSignal] = []

    private(set) var status: Int?
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

    init(
        queue: DispatchQueue,
        options: Options,
        destination: BodyDestination,
        credential: FetchCredential?,
        completion: @escaping @Sendable (FetchOutcome) -> Void
    ) {
        self.queue = queue
        self.options = options
        self.destination = destination
        self.credential = credential
        self.completion = completion
        meter = options.showProgress ? ProgressMeter() : nil
    }

    // MARK: Ending

    private func end(_ outcome: FetchOutcome) {
        guard let completion else { return }
        self.completion = nil
        meter?.finish()
        completion(outcome)
    }

    /// Stops the load from outside (time limit, Ctrl-C) with the reason given.
    func stop(_ connection: LoaderConnection, because error: CLIError) {
        guard completion != nil else { return }
        connection.cancel()
        end(.failed(error))
    }

    // MARK: LoaderConnectionDelegate

    func connection(
        _ connection: LoaderConnection,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        redirectResponse == nil || options.followRedirects ? request : nil
    }

    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {
        status = (response as? HTTPURLResponse)?.statusCode
        if options.failOnHTTPError, let status, status >= 400 {
            return stop(
                connection,
                because: .failure("the server answered HTTP \(status) for \(Self.shown(response.url)).")
            )
        }
        destination.discard()
        meter?.reset(expectedLength: response.expectedContentLength)
        if options.includeHead, let lines = connection.responseHeadLines {
            write(connection, Data((lines.joined(separator: "\r\n") + "\r\n\r\n").utf8))
        }
    }

    func connection(_ connection: LoaderConnection, didReceive data: Data) {
        meter?.add(data.count)
        write(connection, data)
    }

    func connectionDidFinishLoading(_ connection: LoaderConnection) {
        end(.finished(status: status))
    }

    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        end(.failed(.failure(Self.describe(error))))
    }

    func connection(_ connection: LoaderConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
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
        guard let credential, !space.isProxy(), ProtectionSpace(space).authenticationMethod.isHTTPChallenge else {
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

    // MARK: Output

    private func write(_ connection: LoaderConnection, _ data: Data) {
        guard completion != nil else { return }
        do {
            try destination.write(data)
        } catch {
            stop(connection, because: error)
        }
    }

    /// The loader's error in one sentence. Its messages name the URL but never a password
    /// (keyjar refuses URLs that hold one).
    static func describe(_ error: any Error) -> String {
        var text = (error as NSError).localizedDescription
        if text.hasSuffix(".") { text.removeLast() }
        return "could not load the URL: \(text)."
    }

    static func shown(_ url: URL?) -> String { url?.absoluteString ?? "the URL" }
}
