public import Foundation
public import FoundationNetworking
import Keyjar
import KeyjarTransfer

/// What a ``LoaderConnection`` tells its delegate: NSURLConnection's data-delegate contract.
///
/// Every method has a default that does what Apple's loader does when a delegate does not
/// implement it. Messages of one connection arrive one at a time on the connection's delegate
/// queue; after `connectionDidFinishLoading(_:)`, `connection(_:didFailWithError:)` or
/// `cancel()` none follows.
public protocol LoaderConnectionDelegate: AnyObject, Sendable {
    /// Called for the canonical form of the request (`redirectResponse` nil) and for every
    /// redirect. Return the request to send it, another to send that instead, or nil: to a
    /// redirect, nil means "deliver the redirect response itself"; to the canonical request it
    /// fails the load with `URLError.cancelled` (`didFailWithError`), as Apple's connection does.
    ///
    /// The canonical form has a method (GET when the request names none) and, for http and
    /// https, a path: `http://host` becomes `http://host/`. A registered protocol's canonical
    /// form is its own (``LoaderProtocol/canonicalRequest(for:)``).
    ///
    /// A 4xx or 5xx response with a `Location` field is the response, not a redirect: the URL
    /// Loading System guide's "alternate error page" redirect is behaviour of 2009 that RFC 9110
    /// (§10.2.2: `Location` redirects only on 3xx) and every current client dropped.
    func connection(
        _ connection: LoaderConnection,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest?

    /// A response head arrived. It may come more than once (e.g. a redirect the delegate
    /// refused after data was shown, multipart/x-mixed-replace): each one means "discard what
    /// you had".
    ///
    /// An HTTP response's `suggestedFilename` is Apple's: the Content-Disposition file name,
    /// else the URL's last path component, else its host, else "unknown" (Foundation on Linux
    /// answers "Unknown" without Content-Disposition); no extension is added from the MIME type.
    func connection(_ connection: LoaderConnection, didReceive response: URLResponse)

    /// The next bytes of the body, as they arrive.
    func connection(_ connection: LoaderConnection, didReceive data: Data)

    func connection(
        _ connection: LoaderConnection,
        didSendBodyData bytesWritten: Int,
        totalBytesWritten: Int,
        totalBytesExpectedToWrite: Int
    )

    /// The response is about to be stored in the loader's response cache: asked whenever one
    /// would be (a response its rules allow storing, one a validation refreshed, a registered
    /// protocol's that its storage policy allows), before `connectionDidFinishLoading`. Return
    /// it, a changed one, or nil to store nothing. A changed one is what is stored: its response
    /// (status and header fields, which the cache's rules then read), data, storage policy and
    /// `userInfo`, whose property-list values (strings, numbers, dates, data, arrays and
    /// dictionaries of them) are kept; a value of another type is not stored.
    func connection(
        _ connection: LoaderConnection,
        willCacheResponse cachedResponse: CachedURLResponse
    ) -> CachedURLResponse?

    func connectionDidFinishLoading(_ connection: LoaderConnection)

    /// The load failed: a `URLError` with the failing URL in its `userInfo`.
    func connection(_ connection: LoaderConnection, didFailWithError error: any Error)

    /// Whether the credential storage may answer challenges before the delegate is asked, and
    /// keep credentials that succeeded. Asked once, before the load, and only of delegates that
    /// do not adopt ``LoaderConnectionAuthenticationDelegate`` (those always use it, as Apple's
    /// do). `false`: the storage is neither read nor written, and a Basic credential the loader
    /// kept from an earlier load is not sent pre-emptively either: a challenge comes to the
    /// delegate. Default: true.
    func connectionShouldUseCredentialStorage(_ connection: LoaderConnection) -> Bool

    /// A challenge this delegate was holding was cancelled: the connection was cancelled while
    /// it waited for the answer (the one message that may still come after `cancel()`), or its
    /// sender was told to cancel (then the load fails with `.userCancelledAuthentication`).
    func connection(_ connection: LoaderConnection, didCancel challenge: URLAuthenticationChallenge)
}

extension LoaderConnectionDelegate {
    public func connection(
        _ connection: LoaderConnection,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        request
    }
    public func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {}
    public func connection(_ connection: LoaderConnection, didReceive data: Data) {}
    public func connection(
        _ connection: LoaderConnection,
        didSendBodyData bytesWritten: Int,
        totalBytesWritten: Int,
        totalBytesExpectedToWrite: Int
    ) {}
    public func connection(
        _ connection: LoaderConnection,
        willCacheResponse cachedResponse: CachedURLResponse
    ) -> CachedURLResponse? {
        cachedResponse
    }
    public func connectionDidFinishLoading(_ connection: LoaderConnection) {}
    public func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {}
    public func connectionShouldUseCredentialStorage(_ connection: LoaderConnection) -> Bool { true }
    public func connection(_ connection: LoaderConnection, didCancel challenge: URLAuthenticationChallenge) {}
}

/// A delegate that sends a streamed request body again itself: NSURLConnection's
/// `connection(_:needNewBodyStream:)`. Swift cannot tell a protocol's default from an
/// implementation, so implementing the method means adopting this protocol.
///
/// Apple documents both cases, and the connection follows them. Without it, "body stream data
/// is spooled to disk in case retransmission is required": the connection copies the stream
/// as it first sends it (to a private file without a name) and sends the copy again after a
/// 307 or 308 redirect or an authentication retry. With it, "the client opts out of automatic
/// spooling": nothing is copied, the delegate is asked for "a new, unopened stream" each time
/// the body must be sent again, and "if this delegate method returns NULL, the connection
/// fails" (`.requestBodyStreamExhausted`).
public protocol LoaderConnectionBodyStreamDelegate: LoaderConnectionDelegate {
    func connection(_ connection: LoaderConnection, needNewBodyStream request: URLRequest) -> InputStream?
}

/// A delegate that answers authentication challenges itself (the preferred form). The
/// connection waits until the challenge's sender is told what to do.
///
/// A server-trust challenge comes only when a certificate fails verification, unless the
/// delegate also adopts ``LoaderConnectionLegacyAuthenticationDelegate`` and says in
/// `connection(_:canAuthenticateAgainst:)` that it can authenticate against
/// `NSURLAuthenticationMethodServerTrust`: then it comes for every server (Apple's connection
/// sends one on every TLS connection to a delegate with this method).
public protocol LoaderConnectionAuthenticationDelegate: LoaderConnectionDelegate {
    func connection(_ connection: LoaderConnection, willSendRequestFor challenge: URLAuthenticationChallenge)
}

/// The older trio, used only when the delegate does not adopt
/// ``LoaderConnectionAuthenticationDelegate``.
public protocol LoaderConnectionLegacyAuthenticationDelegate: LoaderConnectionDelegate {
    /// Default (Apple's): every space but client-certificate and server-trust ones.
    ///
    /// A delegate that answers true for a space whose method is
    /// `NSURLAuthenticationMethodServerTrust` (``LoaderAuthenticationMethod/serverTrust``) is
    /// sent a server-trust challenge for every server the load connects to over TLS, whether or
    /// not its certificate passes verification, as the URL Loading System guide has it: "return
    /// YES if the protection space has an authentication type of
    /// NSURLAuthenticationMethodServerTrust" to perform custom TLS chain validation. It is asked
    /// before the load's first request to each https host and port, with a space carrying no
    /// certificate yet; the challenge that follows carries a ``ServerTrustProtectionSpace``.
    /// Answering that challenge:
    /// - with a credential: this certificate's key is trusted for the host and port (and pinned
    ///   for the load's connections to it), whether or not it passes verification;
    /// - `performDefaultHandling`, `continueWithoutCredential` or
    ///   `rejectProtectionSpaceAndContinue`: default evaluation (verification, or a trust
    ///   decision kept earlier: ``ServerTrust/isTrusted``); an untrusted certificate fails the
    ///   load with `.serverCertificateUntrusted`;
    /// - `cancel`: the load fails with `.userCancelledAuthentication` before any byte of the
    ///   request is sent.
    ///
    /// The certificate shown is the one the server presents in a handshake Keyjar makes for the
    /// question (libcurl cannot hold a handshake open for an answer), so the delegate is asked
    /// once per server in each load, including where Apple's loader would reuse a connection
    /// without asking; a certificate it accepted is pinned, so the load's connections present
    /// that key or fail.
    func connection(_ connection: LoaderConnection, canAuthenticateAgainst protectionSpace: URLProtectionSpace) -> Bool
    func connection(_ connection: LoaderConnection, didReceive challenge: URLAuthenticationChallenge)
}

extension LoaderConnectionLegacyAuthenticationDelegate {
    public func connection(
        _ connection: LoaderConnection,
        canAuthenticateAgainst protectionSpace: URLProtectionSpace
    ) -> Bool {
        protectionSpace.authenticationMethod != LoaderAuthenticationMethod.clientCertificate
            && protectionSpace.authenticationMethod != LoaderAuthenticationMethod.serverTrust
    }
}

/// Apple's authentication-method names that Foundation on Linux marks unavailable (they need
/// the Darwin Security framework there), and Keyjar's own for bearer tokens; the loader uses
/// them for its own challenges.
public enum LoaderAuthenticationMethod {
    public static let serverTrust = "NSURLAuthenticationMethodServerTrust"
    public static let clientCertificate = "NSURLAuthenticationMethodClientCertificate"
    /// A `WWW-Authenticate: Bearer` challenge (RFC 6750): answer it with a credential whose
    /// password is the token (`NSURLAuthenticationMethodHTTPBearer`).
    public static let httpBearer = NSURLAuthenticationMethodHTTPBearer
}
