import Foundation
import FoundationNetworking
import Glibc
import Keyjar
import KeyjarCommands
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
    /// The load finished; `status` is the last response's (nil for none).
    case finished(status: Int?)
    case failed(CLIError)
}

/// What the command needs of a running fetch, whether its body goes to standard output or to a
/// file: starting and stopping it, and what its challenges came to.
protocol FetchReceiver: AnyObject, Sendable {
    var answerer: ChallengeAnswerer { get }
    /// Ctrl-C and friends stop the load; kept for as long as the load runs.
    var signalSources: [any DispatchSourceSignal] { get set }
    func begin()
    /// Stops the load from outside (time limit, Ctrl-C) with the reason given.
    func stop(because error: CLIError)
}

/// What every fetch is told, whatever receives it.
struct FetchOptions {
    var includeHead: Bool
    /// Whether -i's heads go to a terminal: then without the server's control characters.
    var headToTerminal = Output.standardOutputIsTerminal
    var failOnHTTPError: Bool
    var followRedirects: Bool
    var showProgress: Bool
    /// `-H 'Cookie: …'`, sent with the stored cookies on every request of the load.
    var userCookies: UserCookies?
    /// `-H 'Authorization: …'` with `--location-trusted`: sent again after a redirect to
    /// another origin, which the loader's redirect rule otherwise leaves without it.
    var trustedAuthorization: String?

    /// What the delegate answers for a redirect: nil stops there (--no-follow); with -i, the
    /// redirect's head is written first, as curl -i -L shows every response.
    func redirect(_ request: URLRequest, after head: [String]?, write: (Data) -> Void) -> URLRequest? {
        guard followRedirects else { return nil }
        if includeHead, let head { write(shownHead(head)) }
        var next = userCookies?.apply(to: request) ?? request
        if let trustedAuthorization { next.setValue(trustedAuthorization, forHTTPHeaderField: "Authorization") }
        return next
    }

    /// A response head as -i shows it: as it came into a file or a pipe (as curl writes it);
    /// on a terminal, with the server's control characters shown escaped (``TerminalText``).
    func shownHead(_ lines: [String]) -> Data {
        let shown = headToTerminal ? lines.map { TerminalText.safe($0) } : lines
        return Data((shown.joined(separator: "\r\n") + "\r\n\r\n").utf8)
    }

    /// With --fail, the error a response of 400 or more ends the fetch with.
    func failure(for response: URLResponse) -> CLIError? {
        guard failOnHTTPError, let status = (response as? HTTPURLResponse)?.statusCode, status >= 400 else {
            return nil
        }
        return .failure("the server answered HTTP \(status) for \(FetchDelegate.shown(response.url)).")
    }
}

/// How a fetch ends, once: the progress meter's last line, then the command is told.
struct FetchEnding {
    private var completion: (@Sendable (FetchOutcome) -> Void)?
    var meter: ProgressMeter?

    init(showProgress: Bool, completion: @escaping @Sendable (FetchOutcome) -> Void) {
        self.completion = completion
        meter = showProgress ? ProgressMeter() : nil
    }

    var isOpen: Bool { completion != nil }

    mutating func end(_ outcome: FetchOutcome) {
        guard let completion else { return }
        self.completion = nil
        meter?.finish()
        completion(outcome)
    }
}

/// Receives a `keyjar fetch` load whose body goes to standard output: writes the head (with
/// `-i`) and body, draws the progress meter, and answers challenges. Everything runs on the
/// one serial queue given to the connection, the signal sources and the time limit, so its
/// state needs no lock.
final class FetchDelegate: LoaderConnectionAuthenticationDelegate, FetchReceiver, @unchecked Sendable {
    private let options: FetchOptions
    let answerer: ChallengeAnswerer
    private var ending: FetchEnding
    var connection: LoaderConnection?
    var signalSources: [any DispatchSourceSignal] = []
    private(set) var status: Int?
    /// Where the body goes: standard output, or a FIFO or device given with -o.
    private let output: Int32

    init(
        options: FetchOptions,
        answerer: ChallengeAnswerer,
        output: Int32 = STDOUT_FILENO,
        completion: @escaping @Sendable (FetchOutcome) -> Void
    ) {
        self.options = options
        self.answerer = answerer
        self.output = output
        ending = FetchEnding(showProgress: options.showProgress, completion: completion)
    }

    func begin() { connection?.start() }

    func stop(because error: CLIError) {
        guard ending.isOpen else { return }
        connection?.cancel()
        ending.end(.failed(error))
    }

    // MARK: LoaderConnectionDelegate

    func connection(
        _ connection: LoaderConnection,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        guard redirectResponse != nil else { return request }
        return options.redirect(request, after: connection.responseHeadLines) { write($0) }
    }

    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {
        status = (response as? HTTPURLResponse)?.statusCode
        if let failure = options.failure(for: response) { return stop(because: failure) }
        ending.meter?.reset(expectedLength: response.expectedContentLength)
        if options.includeHead, let lines = connection.responseHeadLines { write(options.shownHead(lines)) }
    }

    func connection(_ connection: LoaderConnection, didReceive data: Data) {
        ending.meter?.add(data.count)
        write(data)
    }

    func connectionDidFinishLoading(_ connection: LoaderConnection) {
        ending.end(.finished(status: status))
    }

    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        ending.end(.failed(.failure(Self.describe(error))))
    }

    func connection(_ connection: LoaderConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
        answerer.answer(challenge)
    }

    // MARK: Output

    private func write(_ data: Data) {
        guard ending.isOpen else { return }
        let failure = output == STDOUT_FILENO && Output.isClosed ? EBADF : Output.writeAll(data, to: output)
        if let failure {
            let error =
                output == STDOUT_FILENO
                ? Output.writeFailure(failure)
                : CLIError.failure("cannot write the response: \(String(cString: strerror(failure))).")
            stop(because: error)
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
