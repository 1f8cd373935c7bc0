import Foundation
import KeyjarCore
import KeyjarLocks
import Synchronization

/// The cookie view of the URL this store was last asked about. A client loading the same URL
/// again and again (polling, an API endpoint) asks with the same URL for the Cookie header
/// and again for the response's Set-Cookie lines; taking host, port and path out of a
/// Foundation URL is a parse and a new string each time, while comparing the URL's string with
/// the last one costs a few nanoseconds.
final class RecentCookieURLs: Sendable {
    private struct Entry {
        var absoluteString: String
        var cookieURL: CookieURL?
    }

    private let last = Locked<Entry?>(nil)

    /// `CookieURL(url)`, parsed once for a run of lookups of one URL.
    func cookieURL(for url: URL) -> CookieURL? {
        let string = url.absoluteString
        if let hit = last.withLock({ entry in entry.flatMap { $0.absoluteString == string ? $0 : nil } }) {
            return hit.cookieURL
        }
        let parsed = CookieURL(url)
        last.withLock { $0 = Entry(absoluteString: string, cookieURL: parsed) }
        return parsed
    }
}
