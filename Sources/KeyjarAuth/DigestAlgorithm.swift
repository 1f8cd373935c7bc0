/// The `algorithm` of a Digest challenge (RFC 7616 §3.3, §6.1), with the `-sess` variants.
public enum DigestAlgorithm: String, Sendable, Hashable, CaseIterable {
    case md5 = "MD5"
    case md5Session = "MD5-sess"
    case sha256 = "SHA-256"
    case sha256Session = "SHA-256-sess"
    case sha512_256 = "SHA-512-256"
    case sha512_256Session = "SHA-512-256-sess"

    /// Reads the token case-insensitively (`md5-SESS` is `MD5-sess`); nil for algorithms Keyjar
    /// does not implement.
    public init?(token: String) {
        let lowered = token.lowercased()
        guard let match = Self.allCases.first(where: { $0.rawValue.lowercased() == lowered }) else { return nil }
        self = match
    }

    /// Whether H(A1) also covers the nonce and cnonce (the `-sess` variants, §3.4.2).
    public var isSession: Bool {
        switch self {
        case .md5Session, .sha256Session, .sha512_256Session: return true
        case .md5, .sha256, .sha512_256: return false
        }
    }

    /// Higher is stronger; `-sess` ranks with its base hash, since it changes what is hashed,
    /// not how hard the hash is to break.
    public var strength: Int {
        switch self {
        case .md5, .md5Session: return 0
        case .sha256, .sha256Session: return 1
        case .sha512_256, .sha512_256Session: return 2
        }
    }

}

/// The quality of protection a Digest response covers (RFC 7616 §3.3).
public enum DigestQualityOfProtection: String, Sendable, Hashable, CaseIterable {
    /// The request method and URI.
    case auth
    /// The method, URI and a hash of the request body: needs the whole body before sending.
    case authInt = "auth-int"
}
