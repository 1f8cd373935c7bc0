public import Foundation
public import FoundationNetworking

/// What a ``LoaderConnection`` tells its delegate: NSURLConnection's data-delegate contract.
///
/// Every method has a default that does what Apple's loader does when a delegate does not
/// implement it. Messages of one connection arrive one at a time on the connection's delegate
/// queue; after `connectionDidFinishLoading(_:)`, `connection(_:didFailWithError:)` or
/// `cancel()` none follows.
public protocol LoaderConnectionDelegate: AnyObject, Sendable {
    /// Called for the canonical form of the request (`redirectResponse` nil) and for every
    /// redirect. Return the request to send it, another to send that instead, or nil: to a
    /// redirect, nil means "deliver the redirect response itself"; to the first request it
    /// cancels the load.
    func connection(
        _ connection: LoaderConnection,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest?

    /// A response head arrived. It may come more than once (e.g. a redirect the delegate
    /// refused after data was shown, multipart/x-mixed-replace): each one means "discard what
    /// you had".
    func connection(_ connection: LoaderConnection, didReceive response: URLResponse)

    /// The next bytes of the body, as they arrive.
    func connection(_ connection: LoaderConnection, didReceive data: Data)

    func connection(
        _ connection: LoaderConnection,
        didSendBodyData bytesWritten: Int,
        totalBytesWritten: Int,
        totalBytesExpectedToWrite: Int
    )

    /// A body stream must be sent again (after a redirect that keeps the body or an
    /// authentication retry). Without it such a load fails with `.requestBodyStreamExhausted`.
    func connection(_ connection: LoaderConnection, needNewBodyStream request: URLRequest) -> InputStream?

    /// The response is about to be cached; return it, a changed one, or nil to not cache it.
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
    /// do). `false`: the storage is neither read nor written. Default: true.
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
    public func connection(_ connection: LoaderConnection, needNewBodyStream request: URLRequest) -> InputStream? {
        nil
    }
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

/// A delegate that answers authentication challenges itself (the preferred form). The
/// connection waits until the challenge's sender is told what to do.
public protocol LoaderConnectionAuthenticationDelegate: LoaderConnectionDelegate {
    func connection(_ connection: LoaderConnection, willSendRequestFor challenge: URLAuthenticationChallenge)
}

/// The older trio, used only when the delegate does not adopt
/// ``LoaderConnectionAuthenticationDelegate``.
public protocol LoaderConnectionLegacyAuthenticationDelegate: LoaderConnectionDelegate {
    /// Default (Apple's): every space but client-certificate and server-trust ones.
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
/// the Darwin Security framework there); the loader uses them for its own challenges.
public enum LoaderAuthenticationMethod {
    public static let serverTrust = "NSURLAuthenticationMethodServerTrust"
    public static let clientCertificate = "NSURLAuthenticationMethodClientCertificate"
}
