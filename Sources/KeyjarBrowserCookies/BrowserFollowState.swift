public import KeyjarCore

/// What `--follow` has imported, and what a fresh read of the browser changes in it.
///
/// Cookies are keyed by identity (name, domain, host-only, path, partition key) and compared by
/// what a request would carry: value, expiry, Secure, HttpOnly, SameSite. Creation and
/// last-access times are left out: the browser moves the access time on every request, and
/// re-importing on each would send every cookie of a busy site again and again.
///
/// A cookie this state imported that is gone from the browser (a logout, an expiry the browser
/// purged) is reported as vanished, with what was imported, to be deleted from the jar only if
/// the jar still holds that: the tool follows the browser's session out as well as in, and a
/// cookie a program stored since (a fresh Set-Cookie of the same identity) stays.
public struct BrowserFollowState: Sendable {
    private var imported: [Cookie.Identity: Cookie] = [:]

    public init() {}

    /// What to send after a fresh read: the cookies new or different since the last import,
    /// and the identities of imported cookies no longer in the browser.
    public struct Changes: Sendable, Hashable {
        public var changed: [Cookie] = []
        /// The imported cookies (as imported) no longer in the browser.
        public var vanished: [Cookie] = []
        public var isEmpty: Bool { changed.isEmpty && vanished.isEmpty }
    }

    /// Records `cookies` as imported (the first import, or one whose changes were sent).
    public mutating func record(_ cookies: [Cookie]) {
        for cookie in cookies { imported[cookie.identity] = cookie }
    }

    /// The changes of `cookies`, the browser's whole current set, and takes them as imported.
    public mutating func apply(_ cookies: [Cookie]) -> Changes {
        var changes = Changes()
        var current: [Cookie.Identity: Cookie] = [:]
        for cookie in cookies {
            current[cookie.identity] = cookie
            if let before = imported[cookie.identity], Self.sendsTheSame(before, cookie) { continue }
            changes.changed.append(cookie)
        }
        changes.vanished = imported.filter { current[$0.key] == nil }.map(\.value).sorted {
            ($0.domain, $0.name, $0.path, $0.partitionKey?.serialized ?? "") < (
                $1.domain, $1.name, $1.path, $1.partitionKey?.serialized ?? ""
            )
        }
        imported = current
        return changes
    }

    public var count: Int { imported.count }

    static func sendsTheSame(_ one: Cookie, _ other: Cookie) -> Bool {
        one.value == other.value && one.expires == other.expires && one.secure == other.secure
            && one.httpOnly == other.httpOnly && one.sameSite == other.sameSite
    }
}
