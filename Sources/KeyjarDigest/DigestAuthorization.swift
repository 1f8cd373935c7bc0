internal import Foundation
public import KeyjarAuth
import KeyjarPlatform

/// One Digest `Authorization` (or `Proxy-Authorization`) value (RFC 7616 §3.4), made by
/// ``DigestSession``. Keeps H(A1) to check the server's `rspauth`; neither it nor the password
/// ever appears in `description`.
public struct DigestAuthorization: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The user name as sent: the name itself, or H(user:realm) with `userhash`.
    public let username: String
    /// Whether `username` goes out as `username*` (RFC 8187), for names a quoted string can't carry.
    public let usesExtendedUsername: Bool
    public let realm: String
    public let nonce: String
    public let uri: String
    /// Sent only when the challenge named one.
    public let algorithm: DigestAlgorithm
    let sendsAlgorithm: Bool
    /// nil in the RFC 2069 form, which also has no `nc` and `cnonce`.
    public let qualityOfProtection: DigestQualityOfProtection?
    /// 8 lower-case hex digits, `00000001` for the first use of a nonce.
    public let nonceCount: String?
    public let cnonce: String?
    public let opaque: String?
    public let userhash: Bool
    /// The `response` hash.
    public let response: String
    public let target: AuthorizationTarget
    /// H(A1): password-equivalent, so private and never printed.
    let sessionKey: String

    init(
        username: String,
        usesExtendedUsername: Bool,
        realm: String,
        nonce: String,
        uri: String,
        algorithm: DigestAlgorithm,
        sendsAlgorithm: Bool,
        qualityOfProtection: DigestQualityOfProtection?,
        nonceCount: String?,
        cnonce: String?,
        opaque: String?,
        userhash: Bool,
        response: String,
        target: AuthorizationTarget,
        sessionKey: String
    ) {
        self.username = username
        self.usesExtendedUsername = usesExtendedUsername
        self.realm = realm
        self.nonce = nonce
        self.uri = uri
        self.algorithm = algorithm
        self.sendsAlgorithm = sendsAlgorithm
        self.qualityOfProtection = qualityOfProtection
        self.nonceCount = nonceCount
        self.cnonce = cnonce
        self.opaque = opaque
        self.userhash = userhash
        self.response = response
        self.target = target
        self.sessionKey = sessionKey
    }

    /// `Authorization` or `Proxy-Authorization`.
    public var headerName: String { target.headerName }

    /// `Digest username="…", realm="…", …` in RFC 7616 §3.9.1's order; tokens (`algorithm`,
    /// `nc`, `qop`, `userhash`) unquoted as the RFC's grammar wants.
    public var headerValue: String {
        var fields: [String] = []
        if usesExtendedUsername {
            fields.append("username*=" + Self.extendedValue(username))
        } else {
            fields.append("username=" + HTTPSyntax.quoted(username))
        }
        fields.append("realm=" + HTTPSyntax.quoted(realm))
        fields.append("uri=" + HTTPSyntax.quoted(uri))
        if sendsAlgorithm { fields.append("algorithm=" + algorithm.rawValue) }
        fields.append("nonce=" + HTTPSyntax.quoted(nonce))
        if let qualityOfProtection, let nonceCount, let cnonce {
            fields.append("nc=" + nonceCount)
            fields.append("cnonce=" + HTTPSyntax.quoted(cnonce))
            fields.append("qop=" + qualityOfProtection.rawValue)
        }
        fields.append("response=" + HTTPSyntax.quoted(response))
        if let opaque { fields.append("opaque=" + HTTPSyntax.quoted(opaque)) }
        if userhash { fields.append("userhash=true") }
        return "Digest " + fields.joined(separator: ", ")
    }

    /// RFC 8187 `ext-value`: `UTF-8''` then the UTF-8 bytes, attr-chars kept and the rest
    /// percent-encoded.
    static func extendedValue(_ value: String) -> String {
        let attributeCharacters = Set("!#$&+-.^_`|~".utf8)
        var encoded = "UTF-8''"
        for byte in value.utf8 {
            let isAlphanumeric =
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            if isAlphanumeric || attributeCharacters.contains(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + Hex.encode([byte], uppercase: true)
            }
        }
        return encoded
    }

    public var description: String {
        var parts = ["username: \(username)", "realm: \(realm)", "uri: \(uri)", "algorithm: \(algorithm.rawValue)"]
        if let qualityOfProtection { parts.append("qop: \(qualityOfProtection.rawValue)") }
        if let nonceCount { parts.append("nc: \(nonceCount)") }
        return "DigestAuthorization(\(parts.joined(separator: ", ")), password: <hidden>)"
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror {
        Mirror(self, children: ["username": username, "realm": realm, "uri": uri, "nonceCount": nonceCount as Any])
    }
}
