public import FoundationEssentials
import KeyjarCodec

/// The refresh request of OAuth 2.0 (RFC 6749 §6) and the token endpoint's answer to it
/// (§5.1, §5.2): the one place that format is written and read.
///
/// ```swift
/// let request = OAuthRefreshRequest(refreshToken: refreshToken, clientID: "cli")
/// // POST request.body to the endpoint with Content-Type: request.contentType, then:
/// let answer = try request.response(status: 200, body: responseBody)
/// answer.accessToken          // sent as "Authorization: Bearer …"
/// answer.expires(from: now)   // absolute expiry, nil when the server gave none
/// ```
///
/// Secrets never reach a description or an error: the tokens are hidden in descriptions and
/// mirrors, an error's text is built from fixed words, the server's error code, and its
/// `error_description` only when that is plain text that contains no token.
public struct OAuthRefreshRequest: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The refresh token sent (a secret).
    public let refreshToken: String
    /// The client's identifier, for a public client (§3.2.1, §2.3.1: sent in the body).
    public let clientID: String?

    /// - Throws: ``OAuthTokenError/malformedRequest(_:)`` for an empty refresh token or one with
    ///   control characters (§A.17: VSCHAR only), or a client id with control characters.
    public init(refreshToken: String, clientID: String? = nil) throws(OAuthTokenError) {
        guard !refreshToken.isEmpty, refreshToken.utf8.allSatisfy(OAuthSyntax.isVisibleOrSpace) else {
            throw .malformedRequest("the refresh token is empty or has characters OAuth does not allow")
        }
        if let clientID, clientID.isEmpty || !clientID.utf8.allSatisfy(OAuthSyntax.isVisibleOrSpace) {
            throw .malformedRequest("the client id is empty or has characters OAuth does not allow")
        }
        self.refreshToken = refreshToken
        self.clientID = clientID
    }

    /// `application/x-www-form-urlencoded` (§4.1.3, §6).
    public var contentType: String { "application/x-www-form-urlencoded" }

    /// `grant_type=refresh_token&refresh_token=…[&client_id=…]`, form-encoded.
    public var body: Data {
        var fields = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
        if let clientID { fields.append(("client_id", clientID)) }
        return Data(
            fields.map { OAuthSyntax.formEncoded($0) + "=" + OAuthSyntax.formEncoded($1) }.joined(separator: "&").utf8
        )
    }

    /// Reads the token endpoint's answer to this request.
    /// - Parameters:
    ///   - status: The HTTP status code.
    ///   - body: The response body (JSON, §5.1 and §5.2).
    /// - Throws: ``OAuthTokenError``: the server refused (``OAuthTokenError/refused(_:description:status:)``,
    ///   `invalid_grant` meaning the refresh token is dead), another status without an OAuth
    ///   error, or an answer that is not a usable Bearer token.
    public func response(status: Int, body: Data) throws(OAuthTokenError) -> OAuthTokenResponse {
        let decoded = TokenEndpointJSON(body: body)
        let secrets = [refreshToken, decoded?.accessToken, decoded?.refreshToken].compactMap { $0 }
        // A 200 carrying an error is still a refusal (some servers answer so).
        if let decoded, let code = decoded.error, !code.isEmpty {
            throw .refused(
                OAuthErrorCode.received(code, avoiding: secrets),
                description: OAuthSyntax.plainDescription(decoded.errorDescription, avoiding: secrets),
                status: status
            )
        }
        guard status == 200 else { throw .unexpectedStatus(status) }
        guard let decoded else { throw .malformedResponse("the body is not a JSON object of the token response") }
        guard let accessToken = decoded.accessToken, !accessToken.isEmpty else {
            throw .malformedResponse("the response has no access_token")
        }
        // A Bearer token is sent as RFC 6750 §2.1's b64token (RFC 6749 §A.12 allows any
        // VSCHAR, which a Bearer header could not carry).
        guard BearerAuthorization.isBearerToken(accessToken) else {
            throw .malformedResponse("the access_token has characters a Bearer header cannot carry")
        }
        guard let tokenType = decoded.tokenType else { throw .malformedResponse("the response has no token_type") }
        // §7.1: a client must not use a token whose type it does not understand; §5.1: case-insensitive.
        guard tokenType.lowercased() == "bearer" else {
            throw .unsupportedTokenType(OAuthSyntax.plainDescription(tokenType, avoiding: secrets) ?? "another kind of")
        }
        if let rotated = decoded.refreshToken {
            guard !rotated.isEmpty, rotated.utf8.allSatisfy(OAuthSyntax.isVisibleOrSpace) else {
                throw .malformedResponse("the new refresh_token is empty or has characters OAuth does not allow")
            }
        }
        return OAuthTokenResponse(
            accessToken: accessToken,
            tokenType: tokenType,
            expiresIn: decoded.expiresIn,
            refreshToken: decoded.refreshToken,
            scope: decoded.scope
        )
    }

    public var description: String {
        "OAuthRefreshRequest(refreshToken: <hidden>, clientID: \(clientID ?? "nil"))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror { Mirror(self, children: ["clientID": clientID as Any]) }
}

/// A successful token response (RFC 6749 §5.1).
public struct OAuthTokenResponse: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The new access token (a secret).
    public let accessToken: String
    /// `Bearer`, as the server spelled it.
    public let tokenType: String
    /// Seconds the access token lives from the response; nil when the server did not say.
    public let expiresIn: Double?
    /// The new refresh token when the server rotates them (a secret); nil: keep the one sent (§6).
    public let refreshToken: String?
    public let scope: String?

    public init(accessToken: String, tokenType: String, expiresIn: Double?, refreshToken: String?, scope: String?) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.expiresIn = expiresIn
        self.refreshToken = refreshToken
        self.scope = scope
    }

    /// The absolute expiry (seconds since 1970) for a response received at `now`.
    public func expires(from now: Double) -> Double? { expiresIn.map { now + $0 } }

    public var description: String {
        "OAuthTokenResponse(accessToken: <hidden>, tokenType: \(tokenType), expiresIn: "
            + "\(expiresIn.map { String($0) } ?? "nil"), refreshToken: \(refreshToken == nil ? "nil" : "<hidden>"))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["tokenType": tokenType, "expiresIn": expiresIn as Any, "scope": scope as Any])
    }
}

/// An OAuth error code (RFC 6749 §5.2), the registered ones named.
public struct OAuthErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    public static let invalidRequest = Self(rawValue: "invalid_request")
    public static let invalidClient = Self(rawValue: "invalid_client")
    /// The refresh token is invalid, expired, revoked or another client's: only logging in again helps.
    public static let invalidGrant = Self(rawValue: "invalid_grant")
    public static let unauthorizedClient = Self(rawValue: "unauthorized_client")
    public static let unsupportedGrantType = Self(rawValue: "unsupported_grant_type")
    public static let invalidScope = Self(rawValue: "invalid_scope")

    static let registered: [Self] = [
        .invalidRequest, .invalidClient, .invalidGrant, .unauthorizedClient, .unsupportedGrantType, .invalidScope,
    ]

    /// A code from a response: a registered one as it is; another only when it is plain text
    /// without a secret in it (it ends up in error messages).
    static func received(_ code: String, avoiding secrets: [String]) -> Self {
        if let known = registered.first(where: { $0.rawValue == code }) { return known }
        guard code.utf8.count <= 64, let plain = OAuthSyntax.plainDescription(code, avoiding: secrets) else {
            return Self(rawValue: "unreadable_error")
        }
        return Self(rawValue: plain)
    }

    public var description: String { rawValue }
}

/// Why a token refresh did not give a usable token.
public enum OAuthTokenError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request could not be built.
    case malformedRequest(String)
    /// The token endpoint answered with an OAuth error (§5.2). `description` is the server's
    /// `error_description` when it is plain text without a token in it.
    case refused(OAuthErrorCode, description: String?, status: Int)
    /// A status other than 200 without an OAuth error body.
    case unexpectedStatus(Int)
    /// A 200 whose body is not a usable token response (the reason names no value from it).
    case malformedResponse(String)
    /// A token type other than Bearer (the type as received, if plain).
    case unsupportedTokenType(String)
    /// No answer from the token endpoint (the transport's reason).
    case unreachable(String)

    /// The refresh token is dead (`invalid_grant`): the user has to log in again.
    public var isInvalidGrant: Bool {
        if case .refused(let code, _, _) = self { return code == .invalidGrant }
        return false
    }

    public var description: String {
        switch self {
        case .malformedRequest(let reason): return "cannot build the refresh request: \(reason)"
        case .refused(let code, let text, let status):
            return "the token endpoint refused the refresh (\(code), HTTP \(status))" + (text.map { ": \($0)" } ?? "")
        case .unexpectedStatus(let status): return "the token endpoint answered HTTP \(status) without an OAuth error"
        case .malformedResponse(let reason): return "the token endpoint's answer is unusable: \(reason)"
        case .unsupportedTokenType(let type): return "the token endpoint issued a \(type) token, not a Bearer token"
        case .unreachable(let reason): return "the token endpoint could not be reached: \(reason)"
        }
    }
}

/// The JSON members of §5.1 and §5.2 Keyjar reads; others are ignored.
private struct TokenEndpointJSON {
    var accessToken: String?
    var tokenType: String?
    var expiresIn: Double?
    var refreshToken: String?
    var scope: String?
    var error: String?
    var errorDescription: String?

    /// nil unless `body` is a JSON object whose known members (absent or null allowed) have
    /// their types: an answer with one of them wrong is not trusted in any part.
    init?(body: Data) {
        guard let json = JSONReader.parse(Array(body)) else { return nil }
        do throws(JSONShapeError) {
            accessToken = try json.optionalString("access_token")
            tokenType = try json.optionalString("token_type")
            expiresIn = try json.optional("expires_in", Self.seconds)
            refreshToken = try json.optionalString("refresh_token")
            scope = try json.optionalString("scope")
            error = try json.optionalString("error")
            errorDescription = try json.optionalString("error_description")
        } catch {
            return nil
        }
    }

    /// `expires_in` as a JSON number, as §5.1 says, or a numeric string, as some servers send it.
    private static func seconds(_ value: JSONValue) throws(JSONShapeError) -> Double {
        let seconds: Double
        switch value {
        case .number: seconds = try value.decodeDouble()
        case .string(let text):
            guard let number = Double(text) else { throw .invalidValue }
            seconds = number
        default: throw .wrongType
        }
        guard seconds.isFinite, seconds >= 0 else { throw .invalidValue }
        return seconds
    }
}

enum OAuthSyntax {
    /// VSCHAR, %x20-7E.
    static func isVisibleOrSpace(_ byte: UInt8) -> Bool { (0x20...0x7E).contains(byte) }

    /// application/x-www-form-urlencoded: unreserved characters as they are, every other byte
    /// of the UTF-8 as %XX (a space too, which decoders read like "+").
    static func formEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF")
                out += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0x0F)])
            }
        }
        return out
    }

    /// Server text fit for an error message: printable ASCII (§5.2 restricts
    /// `error_description` to it anyway), at most 200 characters, and dropped altogether when
    /// it contains one of the secrets (a server echoing the refresh token must not make Keyjar
    /// print it).
    static func plainDescription(_ text: String?, avoiding secrets: [String]) -> String? {
        guard let text, !text.isEmpty, text.utf8.allSatisfy(isVisibleOrSpace) else { return nil }
        for secret in secrets where !secret.isEmpty && text.contains(secret) { return nil }
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }
}
