/// The number of an error keyjard replies with: fixed, listed in Schemas/protocol.md, and named
/// here once. A client compares ``KeyjarClientError``'s `wireCode` with these.
///
/// ```swift
/// } catch let error as KeyjarClientError where error.wireCode == WireErrorCode.secretsUnavailable.rawValue {
/// ```
public struct WireErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt16

    public init(rawValue: UInt16) { self.rawValue = rawValue }

    // Protocol
    /// A frame's length is zero or over the limit.
    public static let malformedFrame = WireErrorCode(rawValue: 1)
    /// The hello names a protocol version keyjard does not speak.
    public static let unsupportedVersion = WireErrorCode(rawValue: 2)
    /// A payload is not a message (its description says which field).
    public static let malformedMessage = WireErrorCode(rawValue: 3)
    /// A request came before the hello.
    public static let handshakeRequired = WireErrorCode(rawValue: 4)
    // Requests
    /// A request's argument is out of its domain (a URL, a domain, an empty user …).
    public static let invalidArgument = WireErrorCode(rawValue: 10)
    /// What the request names is not stored.
    public static let notFound = WireErrorCode(rawValue: 11)
    /// The cookie was refused (policy, public suffix, prefix rules …).
    public static let cookieRejected = WireErrorCode(rawValue: 12)
    /// The credential's token cannot be refreshed (no refresh token stored, or the token
    /// endpoint refused it): the user has to log in again and store a new token.
    public static let loginRequired = WireErrorCode(rawValue: 13)
    // Service
    /// The database could not be written (a full disk, an I/O error): nothing was stored.
    public static let storageFailure = WireErrorCode(rawValue: 20)
    /// The Secret Service is unavailable or locked: no password was read or stored.
    public static let secretsUnavailable = WireErrorCode(rawValue: 21)
    /// keyjard refused the request for now (too many connections or too much memory in use).
    public static let overloaded = WireErrorCode(rawValue: 22)
    /// keyjard is stopping.
    public static let shuttingDown = WireErrorCode(rawValue: 23)
    /// The secrets are in an encrypted file that is locked: no password was read or stored
    /// (`keyjar unlock` opens it).
    public static let secretsLocked = WireErrorCode(rawValue: 24)
    /// The passphrase does not open the encrypted secrets file; nothing changed.
    public static let wrongPassphrase = WireErrorCode(rawValue: 25)

    public var description: String { "keyjar error \(rawValue)" }
}
