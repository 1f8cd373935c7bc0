import Foundation
import FoundationNetworking
import KeyjarHTTPCache
import KeyjarResponseCache

/// The response cache's part of one load: what it is doing (a conditional request out for a
/// stored entry or for several variants, a stale entry reloading that may answer an error, a
/// background revalidation about to start), the request as the caller made it while the
/// cache's validators go with the attempt, the response on its way into the cache, and when
/// the attempt went out (a stored response's request time).
///
/// The connection owns one and changes it only through these methods, on its serial work; the
/// decisions themselves are KeyjarHTTPCache's. A value: `LoadCachingTests` drives it without
/// a transfer, a socket or a disk.
struct LoadCaching {
    /// What the cache is doing for the load.
    enum State {
        case none
        /// A conditional request is out for this stored entry.
        case validating(CachedEntry)
        /// A request no stored variant matched is out with the entity tags of these variants
        /// (RFC 9111 §4.3.1): a 304 names the one to use.
        case validatingVariants([CachedEntry])
        /// This stale entry (without a validator) is being loaded again: it answers instead
        /// of an error within its stale-if-error window (LoaderConnection+StaleResponses).
        case reloading(CachedEntry)
        /// Set before the start of a background revalidation (stale-while-revalidate): the
        /// load sends these conditional fields for this entry instead of consulting the cache.
        case revalidatingInBackground(CachedEntry, HTTPHeaderFields)
    }

    /// A response on its way into the cache.
    struct Writing {
        var entry: CachedEntry
        var writer: ResponseCacheWriter
        /// What the delegate is shown (`willCacheResponse`).
        var response: URLResponse
    }

    private(set) var state = State.none
    /// The request as the caller made it, while the cache's validators go with the attempt.
    private(set) var unconditionalRequest: URLRequest?
    private(set) var writing: Writing?
    /// When the current attempt was sent.
    private(set) var requestTime = Date()

    /// Before the cache is consulted for a hop: what it did for an earlier hop is not this one's.
    mutating func beginHop() {
        state = .none
        unconditionalRequest = nil
    }

    /// A conditional request goes out for `entry`; `unconditional` is the request as the
    /// caller made it. (A background revalidation, which has no caller to resend for, becomes
    /// a validation in ``beginBackgroundRevalidation()``.)
    mutating func validate(_ entry: CachedEntry, unconditional: URLRequest) {
        state = .validating(entry)
        unconditionalRequest = unconditional
    }

    /// A request goes out naming the entity tags of `variants`.
    mutating func validateVariants(_ variants: [CachedEntry], unconditional: URLRequest) {
        state = .validatingVariants(variants)
        unconditionalRequest = unconditional
    }

    /// The stale `entry` is loaded again, and may answer should the reload fail.
    mutating func reload(_ entry: CachedEntry) {
        state = .reloading(entry)
    }

    /// Makes the load a background revalidation of `entry` with `conditional` (before it starts).
    mutating func revalidateInBackground(_ entry: CachedEntry, conditional: HTTPHeaderFields) {
        state = .revalidatingInBackground(entry, conditional)
    }

    /// For a background revalidation, instead of consulting the cache: the conditional fields
    /// its request carries (none: a full request, and no validation follows); nil for any other
    /// load.
    mutating func beginBackgroundRevalidation() -> HTTPHeaderFields? {
        guard case .revalidatingInBackground(let entry, let conditional) = state else { return nil }
        // A 304 then refreshes the stored entry, another response replaces it, as for any
        // validation.
        state = conditional.fields.isEmpty ? .none : .validating(entry)
        return conditional
    }

    /// A final response arrived: the request to send again as the caller made it, should the
    /// cache's validation come to nothing (once).
    mutating func takeUnconditionalRequest() -> URLRequest? {
        defer { unconditionalRequest = nil }
        return unconditionalRequest
    }

    /// The stored variant a validation's response is about, the validation over: the one
    /// validated, or, of several, the one a 304 (`fields`) names.
    mutating func takeValidated(_ fields: HTTPHeaderFields) -> CachedEntry? {
        switch state {
        case .none, .reloading, .revalidatingInBackground: return nil
        case .validating(let entry):
            state = .none
            return entry
        case .validatingVariants(let variants):
            state = .none
            return HTTPCacheRules.variantSelected(byNotModified: fields, among: variants.map(\.response)).map {
                variants[$0]
            }
        }
    }

    /// A reload got its response: nothing stale is left to fall back on.
    mutating func reloadAnswered() {
        if case .reloading = state { state = .none }
    }

    /// The validation or reload of a stale entry failed: that entry, to answer instead if its
    /// stale-if-error window allows (once); nil when the load was neither.
    mutating func takeStaleEntry() -> CachedEntry? {
        switch state {
        case .validating(let entry), .reloading(let entry):
            state = .none
            return entry
        case .none, .revalidatingInBackground, .validatingVariants:
            return nil
        }
    }

    /// An attempt goes out at `time`: a response an earlier attempt was writing is not stored.
    mutating func attemptStarting(at time: Date) {
        dropWriting()
        requestTime = time
    }

    /// `writing` is the response being stored from now on (one begun before is dropped).
    mutating func startWriting(_ writing: Writing) {
        dropWriting()
        self.writing = writing
    }

    /// A piece of the body of the response being stored.
    func append(_ data: Data) {
        writing?.writer.append(data)
    }

    /// The response being stored, to offer to the delegate at the load's end (once).
    mutating func takeWriting() -> Writing? {
        defer { writing = nil }
        return writing
    }

    /// Nothing of the response being stored is kept (a redirect, the load's end, a new attempt).
    mutating func dropWriting() {
        writing?.writer.cancel()
        writing = nil
    }
}
