public import Foundation
public import FoundationNetworking
import KeyjarLocks
import KeyjarTransfer

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
/// cookies: the loader passes its redirects and challenges to the delegate. Its cache is its
/// own business too, as URLProtocol's is: the loader does not answer its requests from the
/// response cache but gives it what the cache holds for the request (``cachedResponse``), and
/// keeps a response whose `cacheStoragePolicy` allows it (after the delegate's
/// `willCacheResponse`) when the protocol finishes.
///
/// ``property(forKey:in:)`` and `setProperty(_:forKey:in:)` tag requests, typically so
/// that a protocol recognises a request it made itself and lets it pass (`canInit` false).
open class LoaderProtocol: @unchecked Sendable {
    /// Whether this class loads `request`.
    open class func canInit(with request: URLRequest) -> Bool { false }

    /// The request in the form this protocol loads it (the delegate's first `willSend` sees it).
    open class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    public let request: URLRequest
    /// What the loader's response cache holds for the request (its response, body, storage
    /// policy and `userInfo`), whatever its age: the protocol decides whether it answers. Nil
    /// when there is none, the loader has no cache, or the request's cache policy ignores it.
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

    // MARK: Properties of requests

    /// The header field that carries a request's protocol properties (a binary property list,
    /// in base64). Foundation on Linux keeps URLProtocol's properties in the request object and
    /// drops them whenever a `URLRequest` is copied on write; a header field survives every
    /// copy, redirect and `willSend` that keeps the request's fields. The loader never sends
    /// it; a delegate sees it among `allHTTPHeaderFields`, and a protocol that hands the
    /// request to another HTTP client should remove it (its values may be private).
    public static let propertiesField = "Keyjar-Protocol-Properties"

    /// Whether a request's field is one the loader keeps to itself (``propertiesField``): the
    /// one test of what is sent and what a cache's Vary sees.
    static func isUnsent(_ fieldName: String) -> Bool { ResponseHead.sameFieldName(fieldName, propertiesField) }

    /// The property stored under `key` in `request`; nil when there is none. URLProtocol's
    /// `property(forKey:in:)`.
    public class func property(forKey key: String, in request: URLRequest) -> Any? {
        properties(of: request.value(forHTTPHeaderField: propertiesField))[key]
    }

    /// Stores `value` under `key` in `request`, for protocols to recognise it (a request a
    /// protocol made itself, say). URLProtocol's `setProperty(_:forKey:in:)`, with a
    /// `URLRequest` (Foundation's takes an `NSMutableURLRequest`; so does the overload).
    /// - Returns: false, storing nothing, when `value` is not a property-list value (a string,
    ///   number, Boolean, date, data, or an array or dictionary of them), which a request can
    ///   carry.
    @discardableResult
    public class func setProperty(_ value: Any, forKey key: String, in request: inout URLRequest) -> Bool {
        var stored = properties(of: request.value(forHTTPHeaderField: propertiesField))
        stored[key] = value
        guard let encoded = field(for: stored) else { return false }
        request.setValue(encoded, forHTTPHeaderField: propertiesField)
        return true
    }

    /// `setProperty(_:forKey:in:)` on Foundation's mutable request.
    @discardableResult
    public class func setProperty(_ value: Any, forKey key: String, in request: NSMutableURLRequest) -> Bool {
        var stored = properties(of: request.value(forHTTPHeaderField: propertiesField))
        stored[key] = value
        guard let encoded = field(for: stored) else { return false }
        request.setValue(encoded, forHTTPHeaderField: propertiesField)
        return true
    }

    /// Removes the property stored under `key` in `request`. URLProtocol's
    /// `removeProperty(forKey:in:)`.
    public class func removeProperty(forKey key: String, in request: inout URLRequest) {
        var stored = properties(of: request.value(forHTTPHeaderField: propertiesField))
        stored[key] = nil
        request.setValue(field(for: stored), forHTTPHeaderField: propertiesField)
    }

    /// `removeProperty(forKey:in:)` on Foundation's mutable request.
    public class func removeProperty(forKey key: String, in request: NSMutableURLRequest) {
        var stored = properties(of: request.value(forHTTPHeaderField: propertiesField))
        stored[key] = nil
        request.setValue(field(for: stored), forHTTPHeaderField: propertiesField)
    }

    private static func properties(of field: String?) -> [String: Any] {
        guard let field, let list = Data(base64Encoded: field),
            let properties = try? PropertyListSerialization.propertyList(from: list, options: [], format: nil)
                as? [String: Any]
        else { return [:] }
        return properties
    }

    /// The field's value for `properties`; nil when there are none, or one is not a property list.
    private static func field(for properties: [String: Any]) -> String? {
        guard !properties.isEmpty, PropertyListSerialization.propertyList(properties, isValidFor: .binary),
            let list = try? PropertyListSerialization.data(fromPropertyList: properties, format: .binary, options: 0)
        else { return nil }
        return list.base64EncodedString()
    }

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
