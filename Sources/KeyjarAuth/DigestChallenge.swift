/// A Digest challenge (RFC 7616 §3.3), checked and decoded: what an authorization is computed
/// from.
public struct DigestChallenge: Sendable, Hashable {
    public var realm: String
    public var nonce: String
    /// Echoed unchanged in every authorization.
    public var opaque: String?
    public var algorithm: DigestAlgorithm
    /// Whether the server named the algorithm; if not, the authorization does not name it
    /// either, as RFC 2069 servers expect.
    public var algorithmWasGiven: Bool
    /// The `qop` options offered that Keyjar implements, in the server's order; nil when the
    /// challenge has no `qop` (the RFC 2069 form).
    public var qualityOfProtectionOptions: [DigestQualityOfProtection]?
    /// `stale=true`: the nonce expired, the credentials were right (§3.3).
    public var isStale: Bool
    /// `userhash=true`: the server wants H(user:realm) instead of the user name (§3.4.4).
    public var userhash: Bool
    /// `charset=UTF-8` (§3.3): user name and password are normalised to NFC.
    public var prefersUTF8: Bool

    /// - Throws: ``AuthenticationError`` when the challenge is not Digest, lacks realm or nonce,
    ///   or asks for an algorithm or qop Keyjar cannot answer.
    public init(_ challenge: AuthenticationChallenge) throws(AuthenticationError) {
        guard challenge.hasScheme("Digest") else { throw .wrongScheme(challenge.scheme) }
        guard let realm = challenge.realm else { throw .missingParameter("realm") }
        guard let nonce = challenge.parameter("nonce") else { throw .missingParameter("nonce") }
        self.realm = realm
        self.nonce = nonce
        opaque = challenge.parameter("opaque")
        if let name = challenge.parameter("algorithm") {
            guard let algorithm = DigestAlgorithm(token: name) else { throw .unsupportedAlgorithm(name) }
            self.algorithm = algorithm
            algorithmWasGiven = true
        } else {
            algorithm = .md5
            algorithmWasGiven = false
        }
        if let qop = challenge.parameter("qop") {
            let offered = qop.split(separator: ",").map { $0.trimmingWhitespace().lowercased() }.filter { !$0.isEmpty }
            let known = offered.compactMap(DigestQualityOfProtection.init(rawValue:))
            guard !known.isEmpty else { throw .unsupportedQualityOfProtection(offered) }
            qualityOfProtectionOptions = known
        } else {
            guard !algorithm.isSession else { throw .sessionAlgorithmWithoutQualityOfProtection }
            qualityOfProtectionOptions = nil
        }
        isStale = challenge.parameter("stale")?.lowercased() == "true"
        userhash = challenge.parameter("userhash")?.lowercased() == "true"
        prefersUTF8 = challenge.parameter("charset")?.lowercased() == "utf-8"
    }

    /// The qop to answer with: `auth` when offered (it needs no body), else `auth-int` when the
    /// caller can hash the body; `.some(nil)` for the RFC 2069 form; nil when nothing fits.
    public func qualityOfProtection(canHashBody: Bool) -> DigestQualityOfProtection?? {
        guard let options = qualityOfProtectionOptions else { return .some(nil) }
        if options.contains(.auth) { return .some(.auth) }
        if canHashBody, options.contains(.authInt) { return .some(.authInt) }
        return nil
    }
}

extension Substring {
    func trimmingWhitespace() -> Substring {
        let isText: (Character) -> Bool = { $0 != " " && $0 != "\t" }
        guard let first = firstIndex(where: isText), let last = lastIndex(where: isText) else { return "" }
        return self[first...last]
    }
}
