public import Foundation
public import FoundationNetworking
import KeyjarLocks

/// A protocol an application adds to the loader, in the shape of Foundation's URLProtocol:
/// subclass it, say which requests it handles, and report through `client` what a load
/// produced. Register it with a loader's configuration (`URLLoader.Configuration.protocolClasses`)
/// or process-wide (`registerClass`). A loader asks its configuration's classes first, then
/// the process-wide ones (the last registered first), then its own: `data:` URLs, then
/// libcurl's schemes.
///
/// ```swift
/// final class NotesProtocol: LoaderProtocol, @unchecked Sendable {
///     override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == "notes" }
///     override func startLoading() {
///         let body = Data("a note".utf8)
///         client.urlProtocol(self, didReceive: URLResponse(url: request.url!, mimeType: "text/plain",
///             expectedContentLength: body.count, textEncodingName: "utf-8"), cacheStoragePolicy: .notAllowed)
///         client.urlProtocol(self, didLoad: body)
///         client.urlProtocolDidFinishLoading(self)
///     }
/// }
/// LoaderProtocol.registerClass(NotesProtocol.self)
/// ```
///
/// `startLoading` and `stopLoading` run on the load's own serial queue; the client may be
/// called from any thread, in order. A protocol answers its own redirects, challenges and
/// cookies: the loader passes its redirects and challenges to the delegate, and its responses
/// are not put in the response cache.
open class LoaderProtocol: @unchecked Sendable {
    /// Whether this class loads `request`.
    open class func canInit(with request: URLRequest) -> Bool { false }

    /// The request in the form this protocol loads it (the delegate's first `willSend` sees it).
    open class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    public let request: URLRequest
    /// A stored response for the request; the loader's response cache does not answer for
    /// registered protocols, so this is nil unless the protocol was made by another caller.
    public let cachedResponse: CachedURLResponse?
    public let client: any LoaderProtocolClient

    public required init(request: URLRequest, cachedResponse: CachedURLResponse?, client: any LoaderProtocolClient) {
        self.request = request
        self.cachedResponse = cachedResponse
        self.client = client
    }

    /// Starts the load; report through `client`.
    open func startLoading() {}

    /// The load is over: it finished or failed, the connection was cancelled, or it left this
    /// protocol (a redirect). Any later call to the client is ignored.
    open func stopLoading() {}

    // MARK: Process-wide registration

    private static let registry = Locked<[LoaderProtocol.Type]>([])

    /// Adds a class every loader of the process asks (after its configuration's), ahead of
    /// those registered before it. Returns true (as URLProtocol does).
    @discardableResult
    public static func registerClass(_ protocolClass: LoaderProtocol.Type) -> Bool {
        registry.withLock { classes in
            classes.removeAll { $0 == protocolClass }
            classes.insert(protocolClass, at: 0)
        }
        return true
    }

    public static func unregisterClass(_ protocolClass: LoaderProtocol.Type) {
        registry.withLock { classes in classes.removeAll { $0 == protocolClass } }
    }

    /// The process-wide classes, the last registered first.
    static var registeredClasses: [LoaderProtocol.Type] { registry.withLock { $0 } }
}

/// How a ``LoaderProtocol`` reports a load: Foundation's URLProtocolClient.
public protocol LoaderProtocolClient: AnyObject, Sendable {
    /// The request is redirected: the connection's delegate decides (`willSend`); the load goes
    /// on with its answer, through whichever protocol handles that, or ends with the redirect
    /// response when it answers nil.
    func urlProtocol(_ protocol: LoaderProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse)
    func urlProtocol(
        _ protocol: LoaderProtocol,
        didReceive response: URLResponse,
        cacheStoragePolicy policy: URLCache.StoragePolicy
    )
    func urlProtocol(_ protocol: LoaderProtocol, didLoad data: Data)
    func urlProtocolDidFinishLoading(_ protocol: LoaderProtocol)
    func urlProtocol(_ protocol: LoaderProtocol, didFailWithError error: any Error)
    /// A challenge with the protocol's own sender, passed to the connection's delegate.
    func urlProtocol(_ protocol: LoaderProtocol, didReceive challenge: URLAuthenticationChallenge)
    func urlProtocol(_ protocol: LoaderProtocol, didCancel challenge: URLAuthenticationChallenge)
}
