public import Foundation
public import FoundationNetworking
public import Keyjar
import KeyjarAuth
import KeyjarCore
import KeyjarLocks
public import KeyjarResponseCache
import KeyjarTransfer
import Synchronization

/// A loading session: where its connections take and keep cookies and credentials, and what
/// they learned along the way (spaces that accepted Basic, certificates the user accepted).
///
/// ```swift
/// let loader = try await URLLoader.shared()
/// let (data, response) = try await loader.data(for: URLRequest(url: url))
/// ```
public final class URLLoader: Sendable {
    public struct Configuration: Sendable {
        /// Cookies for every request and from every response; nil sends and keeps none.
        public var cookieStorage: SharedCookieStorage?
        /// Answers challenges (default credential for the space) and keeps credentials that
        /// succeeded by their persistence; nil uses neither.
        public var credentialStorage: (any URLCredentialStorage & Sendable)?
        /// The application's response cache: consulted by every request under its cache
        /// policy, and given the responses the delegate lets through `willCacheResponse`; nil
        /// caches nothing (and `returnCacheDataDontLoad` fails).
        public var responseCache: ResponseCache?
        /// Redirects followed before a load fails with `.httpTooManyRedirects` (Apple's is 16).
        public var maximumRedirects: Int
        /// Sent with every request unless the request sets the same field.
        public var additionalHeaders: [String: String]
        /// The proxy for every request (`http://host:port`, `socks5://host:port`, …); nil uses
        /// the standard environment variables (`http_proxy`, `https_proxy`, `all_proxy`,
        /// `no_proxy`), as libcurl reads them.
        public var proxy: URL?
        /// Protocols this loader asks before the process-wide ones and its own, in this order
        /// (`registerProtocolClass` puts a class first).
        public var protocolClasses: [LoaderProtocol.Type]
        /// The certificate authorities TLS connections are verified against: the system's, or
        /// others besides them for this program (`.adding(file:)`, a company's or development
        /// CA), or instead of them (`.replacing(file:directory:)`).
        public var trustAnchors: TrustAnchors

        public init(
            cookieStorage: SharedCookieStorage? = nil,
            credentialStorage: (any URLCredentialStorage & Sendable)? = nil,
            responseCache: ResponseCache? = nil,
            maximumRedirects: Int = 16,
            additionalHeaders: [String: String] = ["User-Agent": "Keyjar (libcurl)"],
            proxy: URL? = nil,
            protocolClasses: [LoaderProtocol.Type] = [],
            trustAnchors: TrustAnchors = .system
        ) {
            self.trustAnchors = trustAnchors
            self.proxy = proxy
            self.protocolClasses = protocolClasses
            self.cookieStorage = cookieStorage
            self.credentialStorage = credentialStorage
            self.responseCache = responseCache
            self.maximumRedirects = maximumRedirects
            self.additionalHeaders = additionalHeaders
        }

        /// Adds a protocol class ahead of those already in `protocolClasses`.
        public mutating func registerProtocolClass(_ protocolClass: LoaderProtocol.Type) {
            protocolClasses.removeAll { $0 == protocolClass }
            protocolClasses.insert(protocolClass, at: 0)
        }
    }

    public let configuration: Configuration
    let memory = Locked(SessionMemory())

    public init(configuration: Configuration) {
        self.configuration = configuration
    }

    /// A loader on the user's shared store: keyjard's cookies and credentials through a client
    /// of its own (keyjard is started when needed), and a response cache (by default the
    /// application's, in `$XDG_CACHE_HOME/keyjar/<process name>/`; nil for none). Most programs
    /// want the one loader of the process, `shared()`.
    /// - Throws: `KeyjarClientError` when keyjard cannot be reached; `ResponseCacheError`
    ///   when the cache cannot be opened (pass `cache: nil` to load without one).
    public convenience init(
        sharedStore client: KeyjarClient.Configuration = .init(),
        cache: ResponseCache.Configuration? = .application()
    ) throws {
        let keyjar = try KeyjarClient(configuration: client)
        let responseCache = try cache.map { configuration throws(ResponseCacheError) in
            try ResponseCache(configuration: configuration)
        }
        self.init(
            configuration: Configuration(
                cookieStorage: SharedCookieStorage(client: keyjar),
                credentialStorage: SharedCredentialStorage(client: keyjar),
                responseCache: responseCache
            )
        )
    }

    /// The process's loader on the user's shared store, as `URLSession.shared` is its session:
    /// made by the first call that succeeds (``init(sharedStore:cache:)`` with its defaults),
    /// and returned by every later one, with its one connection to keyjard and its one
    /// response cache.
    /// - Throws: what ``init(sharedStore:cache:)`` throws; a later call tries again.
    public static func shared() throws -> URLLoader {
        try sharedLoader.withLock { loader in
            // Held while the first call connects: callers meanwhile wait for that loader rather
            // than make their own.
            if let loader { return loader }
            let made = try URLLoader()
            loader = made
            return made
        }
    }

    /// `shared()` without holding a thread of the caller's while the first call connects
    /// (which may start keyjard and wait for it).
    public static func shared() async throws -> URLLoader {
        let result = await awaitBlockingCall { () -> Result<URLLoader, any Error> in Result { try shared() } }
        return try result.get()
    }

    private static let sharedLoader = Mutex<URLLoader?>(nil)

    /// Whether this loader loads `request`: a protocol class of its configuration or of the
    /// process does (``LoaderProtocol/canInit(with:)``), or its scheme is one of its own (http,
    /// https, ftp, ftps, file, data). NSURLConnection's `canHandle(_:)` for this loader; a
    /// connection for a request it does not load fails with `.unsupportedURL` before its
    /// delegate is asked anything.
    public func canHandle(_ request: URLRequest) -> Bool {
        protocolClass(for: request) != nil || Self.loadsItself(request)
    }

    /// The first class that loads `request`: the configuration's, the process's (last
    /// registered first), then the loader's own (`data:`); nil leaves it to libcurl.
    func protocolClass(for request: URLRequest) -> LoaderProtocol.Type? {
        for candidate in configuration.protocolClasses where candidate.canInit(with: request) {
            return candidate
        }
        return Self.processProtocolClass(for: request)
    }

    /// The process's classes (last registered first), then the loader's own (`data:`).
    static func processProtocolClass(for request: URLRequest) -> LoaderProtocol.Type? {
        for candidate in LoaderProtocol.registeredClasses where candidate.canInit(with: request) {
            return candidate
        }
        return DataURLProtocol.canInit(with: request) ? DataURLProtocol.self : nil
    }

    static let loadableSchemes = ["http", "https", "ftp", "ftps", "file"]

    /// Whether libcurl loads `request` (its scheme is one of `loadableSchemes`). Schemes are
    /// ASCII and case-insensitive like field names: compared in place, without a lower-cased
    /// copy and an array built for every attempt.
    static func loadsItself(_ request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme else { return false }
        return loadableSchemes.contains { ResponseHead.sameFieldName($0, scheme) }
    }

    /// Starts loading `request`; the delegate hears of it on `delegateQueue` (when nil, on the
    /// connection's own serial queue, which saves a thread hop per message).
    public func connection(
        with request: URLRequest,
        delegate: (any LoaderConnectionDelegate)?,
        delegateQueue: DispatchQueue? = nil,
        startImmediately: Bool = true
    ) -> LoaderConnection {
        LoaderConnection(
            request: request,
            delegate: delegate,
            loader: self,
            delegateQueue: delegateQueue,
            startImmediately: startImmediately
        )
    }
}

/// What a loader remembers between its connections.
struct SessionMemory {
    /// Certificates trusted although they failed verification (a delegate accepted them
    /// beyond one load, or the credential storage keeps the decision), by host ("host:port"):
    /// SHA-256 fingerprint → libcurl key pin.
    var trustedCertificates: [String: [String: String]] = [:]
    /// Client identities a server accepted, by host: sent at once by later loads.
    var clientIdentities: [String: ClientIdentityInUse] = [:]

    /// Spaces where Basic or a stored Bearer token succeeded: later requests under the same
    /// directory of the same origin send it at once instead of waiting for a 401 (RFC 7617
    /// §2.2; a token the server has since refused comes back as a 401 and is refreshed).
    struct KnownBasic {
        var origin: String
        var directory: String
        var space: ProtectionSpace
        var scheme: AuthenticationScheme
        var header: String
        var credential: URLCredential
    }
    var knownBasic: [KnownBasic] = []

    func preemptiveBasic(for url: URL) -> KnownBasic? {
        // Nearly always empty: skip working out the origin and path (URL's are not cheap).
        guard !knownBasic.isEmpty else { return nil }
        let origin = RedirectHop.origin(url)
        let path = url.path.isEmpty ? "/" : url.path
        return knownBasic.last { $0.origin == origin && path.hasPrefix($0.directory) }
    }

    mutating func rememberPreemptive(
        url: URL,
        space: ProtectionSpace,
        scheme: AuthenticationScheme,
        header: String,
        credential: URLCredential
    ) {
        let path = url.path.isEmpty ? "/" : url.path
        let directory = path.hasSuffix("/") ? path : String(path[...(path.lastIndex(of: "/") ?? path.startIndex)])
        let origin = RedirectHop.origin(url)
        knownBasic.removeAll { $0.origin == origin && $0.directory == directory }
        knownBasic.append(
            KnownBasic(
                origin: origin,
                directory: directory,
                space: space,
                scheme: scheme,
                header: header,
                credential: credential
            )
        )
    }

    mutating func forgetPreemptive(space: ProtectionSpace) {
        knownBasic.removeAll { $0.space == space }
    }
}
