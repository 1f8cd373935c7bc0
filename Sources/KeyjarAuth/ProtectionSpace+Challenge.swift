public import FoundationEssentials
public import KeyjarCore

extension ProtectionSpace {
    /// The server space a 401 challenge applies to: the request URL's scheme, host and
    /// effective port, the challenge's realm and method (`.default` for a scheme Keyjar does
    /// not know). Nil when the URL has no scheme or host.
    ///
    /// ```swift
    /// ProtectionSpace(challenge: basicChallenge, requestURL: URL(string: "https://example.com/a")!)
    /// // host example.com, port 443, protocol https, realm from the challenge, .httpBasic
    /// ```
    public init?(challenge: AuthenticationChallenge, requestURL: URL) {
        guard let scheme = requestURL.scheme, let host = requestURL.host(percentEncoded: false), !host.isEmpty
        else { return nil }
        self.init(
            host: host,
            port: requestURL.port,
            protocol: scheme,
            realm: challenge.realm,
            authenticationMethod: Self.method(of: challenge)
        )
    }

    /// The proxy space a 407 challenge applies to: the proxy's host, port (the type's default
    /// when nil) and type, with the challenge's realm and method. A 407 always comes from a
    /// proxy, so `.none` is taken as `.http`.
    public init(challenge: AuthenticationChallenge, proxyHost: String, proxyPort: Int?, proxyType: ProxyType) {
        let proxyType = proxyType == .none ? .http : proxyType
        self.init(
            host: proxyHost,
            port: proxyPort,
            protocol: proxyType.rawValue,
            realm: challenge.realm,
            authenticationMethod: Self.method(of: challenge),
            proxyType: proxyType
        )
    }

    private static func method(of challenge: AuthenticationChallenge) -> AuthenticationMethod {
        AuthenticationScheme(challengeScheme: challenge.scheme)?.authenticationMethod ?? .default
    }
}
