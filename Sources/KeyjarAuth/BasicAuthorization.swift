internal import FoundationEssentials

/// The `Basic` credentials of RFC 7617: `Basic base64(user-id ":" password)`, encoded in UTF-8.
///
/// ```swift
/// let basic = try BasicAuthorization(user: "Aladdin", password: "open sesame")
/// basic.headerValue      // "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ=="
/// ```
///
/// The text is always UTF-8, the only encoding RFC 7617 lets a server ask for; when the
/// challenge says `charset="UTF-8"`, the user name and password are also normalised to NFC as
/// §2.1 requires.
public struct BasicAuthorization: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    public let user: String
    private let password: String
    public let target: AuthorizationTarget

    /// - Parameters:
    ///   - challenge: The Basic challenge answered, if any; only its `charset` matters.
    ///   - target: `.proxy` after a 407.
    /// - Throws: ``AuthenticationError/colonInUserID`` or
    ///   ``AuthenticationError/controlCharacterInCredential``.
    public init(
        user: String,
        password: String,
        challenge: AuthenticationChallenge? = nil,
        target: AuthorizationTarget = .server
    ) throws(AuthenticationError) {
        guard !user.contains(":") else { throw .colonInUserID }
        guard !user.containsControlCharacter, !password.containsControlCharacter else {
            throw .controlCharacterInCredential
        }
        let normalise = challenge?.parameter("charset")?.lowercased() == "utf-8"
        // NFC (RFC 7617 §2.1) from the standard library's tables, which FoundationEssentials
        // lacks: the `keyjar` front links this module without Foundation.
        self.user = normalise ? String(decoding: user._nfcCodeUnits, as: UTF8.self) : user
        self.password = normalise ? String(decoding: password._nfcCodeUnits, as: UTF8.self) : password
        self.target = target
    }

    /// The header to send: `Authorization` or `Proxy-Authorization`.
    public var headerName: String { target.headerName }

    /// `Basic <base64>`.
    public var headerValue: String {
        "Basic " + Data((user + ":" + password).utf8).base64EncodedString()
    }

    public var description: String { "BasicAuthorization(user: \(user), password: <hidden>)" }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["user": user, "target": target]) }
}
