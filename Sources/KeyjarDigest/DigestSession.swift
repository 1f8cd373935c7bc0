internal import Foundation
public import KeyjarAuth
import KeyjarPlatform

/// The Digest state the loader keeps per protection space: the current challenge and how many
/// times its nonce was used (RFC 7616 §3.4: `nc` counts requests sent with one nonce, so a
/// server can spot replays). A value type: the loader stores it and writes back the mutated copy.
///
/// ```swift
/// var session = DigestSession(challenge: try DigestChallenge(challenge))
/// let authorization = try session.authorize(user: "Mufasa", password: "Circle of Life",
///                                           method: "GET", uri: "/dir/index.html")
/// request.setValue(authorization.headerValue, forHTTPHeaderField: authorization.headerName)
/// // Later requests to the same space: authorize again (nc = 00000002), no round trip.
/// ```
public struct DigestSession: Sendable, Hashable {
    public private(set) var challenge: DigestChallenge
    /// Requests already answered with the current nonce.
    public private(set) var nonceCount: UInt32 = 0

    public init(challenge: DigestChallenge) { self.challenge = challenge }

    /// What a new 401/407 Digest challenge means for a space that already had a session.
    public enum Renewal: Sendable, Hashable {
        /// `stale=true` with a new nonce: the credentials were right, the nonce had expired.
        /// Retry with the same credentials; this is not an authentication failure.
        case stale
        /// The credentials were refused: count a failure before trying again.
        case rejected
    }

    /// Adopts a new challenge from the same space (its nonce count restarting at 1) and says
    /// whether the previous attempt failed. A `stale=true` that repeats the old nonce counts as
    /// rejected, so a confused server cannot make the loader retry forever.
    public mutating func renew(with newChallenge: DigestChallenge) -> Renewal {
        let renewal: Renewal = newChallenge.isStale && newChallenge.nonce != challenge.nonce ? .stale : .rejected
        challenge = newChallenge
        nonceCount = 0
        return renewal
    }

    /// The next authorization for a request, with a fresh cnonce from `generator` (16 random
    /// bytes, hex).
    /// - Parameters:
    ///   - method: The request method (`GET`; `CONNECT` for a proxy tunnel).
    ///   - uri: The request-target exactly as sent: path and query, or `host:port` for CONNECT.
    ///   - body: The request body, needed only when the server offers nothing but `auth-int`.
    /// - Throws: ``AuthenticationError`` for a credential with control characters, `auth-int`
    ///   without a body, or an exhausted nonce count.
    public mutating func authorize(
        user: String,
        password: String,
        method: String,
        uri: String,
        body: [UInt8]? = nil,
        target: AuthorizationTarget = .server,
        using generator: inout some RandomNumberGenerator
    ) throws(AuthenticationError) -> DigestAuthorization {
        let cnonce = Hex.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
        return try authorize(
            user: user,
            password: password,
            method: method,
            uri: uri,
            body: body,
            target: target,
            cnonce: cnonce
        )
    }

    /// The same with the system's random generator.
    public mutating func authorize(
        user: String,
        password: String,
        method: String,
        uri: String,
        body: [UInt8]? = nil,
        target: AuthorizationTarget = .server
    ) throws(AuthenticationError) -> DigestAuthorization {
        var generator = SystemRandomNumberGenerator()
        return try authorize(
            user: user,
            password: password,
            method: method,
            uri: uri,
            body: body,
            target: target,
            using: &generator
        )
    }

    /// The same with a given cnonce (known-answer tests; RFC 7616 §3.9).
    public mutating func authorize(
        user: String,
        password: String,
        method: String,
        uri: String,
        body: [UInt8]? = nil,
        target: AuthorizationTarget = .server,
        cnonce: String
    ) throws(AuthenticationError) -> DigestAuthorization {
        guard !user.containsControlCharacter, !password.containsControlCharacter else {
            throw .controlCharacterInCredential
        }
        guard let choice = challenge.qualityOfProtection(canHashBody: body != nil) else {
            throw .unsupportedQualityOfProtection(challenge.qualityOfProtectionOptions?.map(\.rawValue) ?? [])
        }
        guard nonceCount < UInt32.max else { throw .nonceCountExhausted }
        let algorithm = challenge.algorithm
        let user = challenge.prefersUTF8 ? user.precomposedStringWithCanonicalMapping : user
        let password = challenge.prefersUTF8 ? password.precomposedStringWithCanonicalMapping : password

        var sessionKey = algorithm.hashHex("\(user):\(challenge.realm):\(password)")
        if algorithm.isSession { sessionKey = algorithm.hashHex("\(sessionKey):\(challenge.nonce):\(cnonce)") }
        var a2 = "\(method):\(uri)"
        if choice == .authInt {
            guard let body else { throw .requestBodyRequired }
            a2 += ":" + algorithm.hashHex(body)
        }
        let response: String
        var nonceCountText: String?
        if let qop = choice {
            nonceCount += 1
            let count = Hex.digits(nonceCount, width: 8)
            nonceCountText = count
            response = algorithm.hashHex(
                "\(sessionKey):\(challenge.nonce):\(count):\(cnonce):\(qop.rawValue):\(algorithm.hashHex(a2))"
            )
        } else {
            response = algorithm.hashHex("\(sessionKey):\(challenge.nonce):\(algorithm.hashHex(a2))")
        }

        let username: String
        let extended: Bool
        if challenge.userhash {
            username = algorithm.hashHex("\(user):\(challenge.realm)")
            extended = false
        } else {
            username = user
            extended = !HTTPSyntax.isQuotableASCII(user)
        }
        return DigestAuthorization(
            username: username,
            usesExtendedUsername: extended,
            realm: challenge.realm,
            nonce: challenge.nonce,
            uri: uri,
            algorithm: algorithm,
            sendsAlgorithm: challenge.algorithmWasGiven,
            qualityOfProtection: choice,
            nonceCount: nonceCountText,
            cnonce: choice == nil ? nil : cnonce,
            opaque: challenge.opaque,
            userhash: challenge.userhash,
            response: response,
            target: target,
            sessionKey: sessionKey
        )
    }

    /// What an `Authentication-Info` field said about the server.
    public enum ServerAuthentication: Sendable, Hashable {
        /// `rspauth` matched: the server knows the password too.
        case verified
        /// `rspauth` did not match: the response did not come from a server that knows the
        /// password; the loader should not trust it.
        case mismatch
        /// No `rspauth` to check (or the RFC 2069 form, which has none).
        case absent
    }

    /// Reads `Authentication-Info` (RFC 7616 §3.5) sent back for `authorization`: checks
    /// `rspauth` and, when there is a `nextnonce`, uses it from the next request on (nc back
    /// to 1), which saves the round trip a stale nonce would cost.
    /// - Parameter responseBody: The response body, for `rspauth` under `auth-int`.
    public mutating func receiveAuthenticationInfo(
        _ fieldValue: String,
        for authorization: DigestAuthorization,
        responseBody: [UInt8]? = nil
    ) -> ServerAuthentication {
        let parameters = ChallengeParser.parameters(fieldValue).parameters
        func parameter(_ name: String) -> String? { parameters.first { $0.name.lowercased() == name }?.value }

        if let nextNonce = parameter("nextnonce"), !nextNonce.isEmpty, nextNonce != challenge.nonce {
            challenge.nonce = nextNonce
            challenge.isStale = false
            nonceCount = 0
        }
        guard let rspauth = parameter("rspauth"), let qop = authorization.qualityOfProtection,
            let count = authorization.nonceCount, let cnonce = authorization.cnonce
        else { return .absent }
        let algorithm = authorization.algorithm
        var a2 = ":\(authorization.uri)"
        if qop == .authInt { a2 += ":" + algorithm.hashHex(responseBody ?? []) }
        let expected = algorithm.hashHex(
            "\(authorization.sessionKey):\(authorization.nonce):\(count):\(cnonce):\(qop.rawValue):\(algorithm.hashHex(a2))"
        )
        return expected == rspauth.lowercased() ? .verified : .mismatch
    }
}
