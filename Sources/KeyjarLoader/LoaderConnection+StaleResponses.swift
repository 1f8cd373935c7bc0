import Foundation
import FoundationNetworking
import KeyjarHTTPCache
import KeyjarLocks
import KeyjarResponseCache
import Synchronization

// Stale responses (RFC 5861): one served when validating or reloading it fails within its
// stale-if-error window, and the background revalidation of one served at once within its
// stale-while-revalidate window. The rules are KeyjarHTTPCache's; this carries them out.
extension LoaderConnection {
    /// A final response's head: an error status (500, 502, 503, 504) for the validation or the
    /// reload of a stale entry is answered by the entry when stale-if-error allows it. True when
    /// the head was answered here.
    func answerWithStaleResponse(statusCode: Int, url: URL) -> Bool {
        if HTTPCacheRules.isServerError(statusCode), serveStaleInsteadOfFailure(url: url) { return true }
        caching.reloadAnswered()
        return false
    }

    /// The validation or reload of a stale entry failed (a network error, or an error status):
    /// the entry as stored answers, when stale-if-error allows it now. True when it did.
    func serveStaleInsteadOfFailure(url: URL) -> Bool {
        guard let stale = caching.takeStaleEntry() else { return false }
        // That variant (of several under Vary, the one this request matched).
        guard let cache = loader.configuration.responseCache, let hit = cache.lookup(url, variantOf: stale) else {
            return false
        }
        let now = Date()
        guard
            HTTPCacheRules.mayServeStaleOnError(
                hit.entry.response,
                requestHeaders: cacheRequestHeaders(currentRequest),
                now: now
            )
        else {
            hit.body.close()
            return false
        }
        // The failed transfer's own end is not the load's: the stale entry ends it.
        abandonTransfer()
        serve(.whole(hit, age: CacheFreshness(of: hit.entry.response, at: now).age), url: url)
        return true
    }

    /// A background revalidation's first step, instead of consulting the cache: the
    /// conditional fields go with the request (none: a full request). True when this load is
    /// one.
    func beginBackgroundRevalidation(_ request: URLRequest) -> Bool {
        guard let conditional = caching.beginBackgroundRevalidation() else { return false }
        guard !conditional.fields.isEmpty else { return true }
        var validating = request
        for field in conditional where request.value(forHTTPHeaderField: field.name) == nil {
            validating.setValue(field.value, forHTTPHeaderField: field.name)
        }
        // The delegate that hears its response is the revalidation's own.
        setCurrentRequest(validating)
        return true
    }
}

/// One background revalidation of a stale response that was served at once
/// (stale-while-revalidate): a load of its own, with this object as its delegate, so that the
/// load that served the stale response — whose delegate has heard `didFinishLoading` — is
/// never called again. What it gets is stored as any load's response is (a 304 refreshes the
/// entry, another response replaces it); a failure leaves the entry as it was.
///
/// The registry of those running holds it until its load ends: one at a time per loader and
/// URL, so stale hits meanwhile do not start another.
final class BackgroundRevalidation: LoaderConnectionDelegate, Sendable {
    enum State {
        /// Made; its load not started yet.
        case created
        /// Its load runs.
        case running(LoaderConnection)
        /// The response arrived (and was offered to the cache).
        case finished
        /// The load failed; the stored entry stays as it was.
        case failed(String)
    }

    private let state = Locked(State.created)
    private let key: String

    /// Revalidations running, by loader and URL.
    private static let running = Mutex<[String: BackgroundRevalidation]>([:])

    private init(key: String) { self.key = key }

    /// Starts revalidating `entry` with `request` and the `conditional` fields, unless one of
    /// this loader is already revalidating the same URL.
    static func start(of entry: CachedEntry, request: URLRequest, conditional: HTTPHeaderFields, loader: URLLoader) {
        // Per variant: a stale hit on another variant of the URL is revalidated too.
        let key = "\(ObjectIdentifier(loader)) \(entry.key)"
        let revalidation = BackgroundRevalidation(key: key)
        let isFirst = running.withLock { running in
            guard running[key] == nil else { return false }
            running[key] = revalidation
            return true
        }
        guard isFirst else { return }
        var background = request
        background.cachePolicy = .useProtocolCachePolicy
        let connection = loader.connection(with: background, delegate: revalidation, startImmediately: false)
        // Read by the connection's own work, which `start()` schedules after this.
        connection.caching.revalidateInBackground(entry, conditional: conditional)
        revalidation.state.withLock { $0 = .running(connection) }
        connection.start()
    }

    func connectionDidFinishLoading(_ connection: LoaderConnection) { end(.finished) }

    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        end(.failed("\(error)"))
    }

    /// Its load ended: out of the registry (once; a load ends once).
    private func end(_ ending: State) {
        let wasRunning = state.withLock { state in
            guard case .running = state else { return false }
            state = ending
            return true
        }
        guard wasRunning else { return }
        _ = Self.running.withLock { $0.removeValue(forKey: key) }
    }
}
