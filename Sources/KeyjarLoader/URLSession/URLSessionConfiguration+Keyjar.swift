import Foundation
public import FoundationNetworking

extension URLSessionConfiguration {
    /// Loads the http and https requests of every session made with this configuration through
    /// Keyjar: ``KeyjarURLProtocol`` goes first in `protocolClasses`, and Foundation's own cookie
    /// storage, cache and credential storage are taken away (`httpCookieStorage`, `urlCache`,
    /// `urlCredentialStorage` nil; `httpShouldSetCookies` false), since the loader's shared jar,
    /// response cache and credential storage replace them — left in place, Foundation would keep
    /// a copy of every cookie in `HTTPCookieStorage.shared` and send it too.
    ///
    /// ```swift
    /// let configuration = URLSessionConfiguration.default
    /// configuration.useKeyjar()
    /// let session = URLSession(configuration: configuration)
    /// ```
    ///
    /// - Parameter loader: the loader the requests go through; nil for `URLLoader.shared()`, the
    ///   process's loader on the user's shared store, made at the first request (a task fails
    ///   with its `KeyjarClientError` or `ResponseCacheError` when it cannot be made). A loader
    ///   given here is kept for the life of the process, and named to the sessions by an entry
    ///   in `httpAdditionalHeaders` (`X-Keyjar-Loader`) that is never sent.
    public func useKeyjar(_ loader: URLLoader? = nil) {
        var classes = protocolClasses ?? []
        classes.removeAll { ObjectIdentifier($0) == ObjectIdentifier(KeyjarURLProtocol.self) }
        classes.insert(KeyjarURLProtocol.self, at: 0)
        protocolClasses = classes
        httpCookieStorage = nil
        httpShouldSetCookies = false
        urlCache = nil
        urlCredentialStorage = nil
        var headers = httpAdditionalHeaders ?? [:]
        headers[SessionLoaders.headerName] = loader.map(SessionLoaders.register)
        httpAdditionalHeaders = headers.isEmpty ? nil : headers
    }
}
