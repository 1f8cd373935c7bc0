import FoundationEssentials

/// One line (or JSON entry) of a cookie file that was not imported, and why.
public struct CookieFileProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// 1-based line number in a cookies.txt file, or 1-based entry number in a JSON array.
    public var line: Int
    public var message: String

    public init(line: Int, message: String) {
        self.line = line
        self.message = message
    }

    public var description: String { "line \(line): \(message)" }
}

/// What an import did: nothing is dropped silently, every skipped line is accounted for.
public struct CookieImportReport: Sendable, Hashable {
    /// Cookies added or replacing an existing one.
    public var imported = 0
    /// Well-formed cookies whose expiry had already passed.
    public var expired = 0
    /// What the import came to in the jar, once its limits were applied: cookies of the file
    /// now stored as new ones, cookies of the file that replaced a stored one, and stored
    /// cookies evicted to make room. `imported - added - replaced` of the file's cookies did
    /// not fit and were evicted again at once.
    public var added = 0
    public var replaced = 0
    public var evicted = 0
    /// Cookies of the file that are in the jar afterwards.
    public var kept: Int { added + replaced }
    /// Lines refused, with their numbers.
    public var problems: [CookieFileProblem] = []
    /// The jar changes, for a store to persist.
    public var changes: [CookieChange] = []

    public init() {}
}

/// A cookie read from a file, with the line it came from.
public struct NumberedCookie: Sendable, Hashable {
    public var line: Int
    public var cookie: Cookie
    /// False when the file does not record creation times (cookies.txt): an import then gives
    /// the cookies fresh ones in file order.
    public var hasCreationTime: Bool

    public init(line: Int, cookie: Cookie, hasCreationTime: Bool = true) {
        self.line = line
        self.cookie = cookie
        self.hasCreationTime = hasCreationTime
    }
}
