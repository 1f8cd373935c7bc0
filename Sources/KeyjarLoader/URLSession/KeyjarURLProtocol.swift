import Foundation
public import FoundationNetworking
import KeyjarLocks

/// URLSession's requests loaded by KeyjarLoader: a `URLProtocol` for http and https that a
/// program puts first in `URLSessionConfiguration.protocolClasses` (`useKeyjar(_:)` on the
/// configuration does, and takes Foundation's own cookie storage, cache and credential storage
/// away), so that code written for URLSession gets the shared jar, the shared credentials and
/// the response cache without another change. The session's delegate and async API stay as they
/// are: responses, completion handlers, `data(for:)`, redirects through
/// `willPerformHTTPRedirection`, challenges through `didReceive challenge`, upload progress,
/// `willCacheResponse`.
///
/// ```swift
/// let configuration = URLSessionConfiguration.default
/// configuration.useKeyjar()
/// let session = URLSession(configuration: configuration)
/// let (data, response) = try await session.data(for: URLRequest(url: url))
/// ```
///
/// Each request goes through a ``LoaderConnection``: the jar's cookies on every hop and every
/// Set-Cookie line kept under the accept policy (each line one cookie, as sent, where
/// `HTTPURLResponse` joins them with commas), the response cache under the request's cache
/// policy, and from the configuration what URLSession's own protocol takes from it: the
/// `httpAdditionalHeaders` for fields the request does not set, the `requestCachePolicy` and
/// `timeoutIntervalForRequest` for a request that keeps the defaults (there is no public way
/// to tell a default from the same value set).
///
/// **Challenges.** The session's delegate (the task's own, else the session's) is asked
/// first, proposed the stored credential; `performDefaultHandling` (and a session without a
/// delegate) answers with the credential the loader's storage picks by Keyjar's matching
/// rule, once; a credential the delegate gave that got past the challenge is kept by its
/// persistence. A 401 that nobody answered is delivered with its `WWW-Authenticate` fields
/// led by a space: swift-corelibs-foundation starts authentication of its own for a 401
/// Basic response a protocol delivers, which waits forever without a delegate and otherwise
/// sends the request again outside Keyjar; it does not recognise the field led by a space
/// (which HTTP treats as the same value). Server-trust and client-certificate challenges get
/// the loader's default handling without the credential storage (the loader reads no storage
/// for a session's load, so that the delegate is asked first): certificate verification, and
/// no server-trust decision or client certificate kept in keyjard. For the same reason no
/// stored credential is sent pre-emptively: a protected URL costs one 401 first.
///
/// **What swift-corelibs-foundation does not allow** (Swift 6.3):
/// - *Download tasks fail* with `URLError(.unsupportedURL)`: Foundation completes a download
///   task only with a file location that a protocol has no public way to give it (it crashes
///   without one, swift-corelibs-foundation#5465). Download with ``LoaderDownload``
///   (`URLLoader.download`), which saves straight to a file with the same cookies and
///   credentials.
/// - *The body arrives in one piece*, when the load ends: Foundation hands a completion
///   handler only the last piece a protocol delivers, and a protocol cannot tell whether a
///   task has one. A program that streams large bodies uses ``LoaderConnection``.
/// - *Redirects are followed here*: Foundation stops the process when a protocol reports one
///   (`wasRedirectedTo`), so the delegate is asked from the protocol, on the session's
///   delegate queue, while the load waits for its answer.
/// - *The session is found by reflection*: a protocol has no public way to reach its task's
///   session (which every delegate message names) or an upload task's body; the protocol
///   reads both from Foundation's fields and fails the task saying so when a Foundation
///   release has renamed them.
public final class KeyjarURLProtocol: URLProtocol {
    /// The load in flight. `startLoading` and `stopLoading` come on the task's queue; a task
    /// that is suspended and resumed starts a new load.
    private let current = Locked<ProtocolLoad?>(nil)

    public override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme else { return false }
        return scheme.caseInsensitiveCompare("http") == .orderedSame
            || scheme.caseInsensitiveCompare("https") == .orderedSame
    }

    /// The request as it is: the loader makes its own canonical form.
    public override class func canonicalRequest(for request: URLRequest) -> URLRequest {
        request
    }

    public override class func requestIsCacheEquivalent(_ a: URLRequest, to b: URLRequest) -> Bool {
        a.url == b.url && (a.httpMethod ?? "GET") == (b.httpMethod ?? "GET")
    }

    public override func startLoading() {
        let load = ProtocolLoad(protocol: self)
        let previous = current.withLock { current in
            defer { current = load }
            return current
        }
        previous?.cancel()
        load.start()
    }

    public override func stopLoading() {
        current.withLock { current in
            defer { current = nil }
            return current
        }?.cancel()
    }
}
