/// Why cookies could not be read from a browser, in words that say what to do: the names that
/// do exist when a name is wrong, the schema version met when it is one this reader does not
/// know. Never a cookie value or a password.
public struct BrowserCookieImportError: Error, Sendable, Hashable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        case unknownBrowser
        case browserNotFound
        case profileNotFound
        case containerNotFound
        case databaseMissing
        case databaseLocked
        case databaseCorrupt
        case unsupportedSchema
        case secretServiceLocked
        case secretServiceUnavailable
        case noKeyVerifies
        case snapshotFailed
        case watchFailed
    }

    public var code: Code
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
