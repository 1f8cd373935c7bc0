import Foundation
public import FoundationNetworking
public import KeyjarCore

/// Foundation's `URLProtectionSpace` for a Keyjar `ProtectionSpace`, compared by value: what
/// `ProtectionSpace.foundationSpace` makes, so what the loader hands to a delegate and what
/// ``SharedCredentialStorage/allCredentials`` is keyed by.
///
/// Foundation on Linux compares `URLProtectionSpace` objects by identity, so two spaces built
/// alike are not equal there. This one is equal (`isEqual(_:)`, `==`, `hash`) to any
/// `URLProtectionSpace` that names the same space however it spells it: a scheme (`"https"`) or
/// Foundation's constant (`NSURLProtectionSpaceHTTPS`), Apple's proxy types (`"http"`,
/// `"SOCKS"`) or Foundation on Linux's (`NSURLProtectionSpaceHTTPProxy` is the string
/// `"NSURLProtectionSpaceHTTPProxy"` there). Equality is only symmetric from this side: a
/// plain `URLProtectionSpace` on the left of `==` (or as a dictionary key looked up with this
/// one) still compares by identity, which Foundation decides.
///
/// ```swift
/// let handed = ProtectionSpace(host: "proxy.lan", port: 3128, protocol: "http", proxyType: .http).foundationSpace
/// let built = URLProtectionSpace(proxyHost: "proxy.lan", port: 3128, type: NSURLProtectionSpaceHTTPProxy,
///                                realm: nil, authenticationMethod: NSURLAuthenticationMethodDefault)
/// handed == built          // true
/// handed.proxyType         // NSURLProtectionSpaceHTTPProxy
/// ```
public final class KeyjarProtectionSpace: URLProtectionSpace, @unchecked Sendable {
    // @unchecked: immutable after init, like its superclass.
    public let space: ProtectionSpace

    public init(_ space: ProtectionSpace) {
        self.space = space
        if space.isProxy {
            super.init(
                proxyHost: space.host,
                port: space.port,
                type: space.proxyType.foundation,
                realm: space.realm,
                authenticationMethod: space.authenticationMethod.foundation
            )
        } else {
            super.init(
                host: space.host,
                port: space.port,
                protocol: space.protocol,
                realm: space.realm,
                authenticationMethod: space.authenticationMethod.foundation
            )
        }
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? URLProtectionSpace else { return false }
        return ProtectionSpace(other) == space
    }

    public override var hash: Int { space.hashValue }
}

extension ProtectionSpace {
    /// Keyjar's value-type space from Foundation's. Protocols and proxy types are read in
    /// Apple's spelling and in Foundation on Linux's constants alike; a proxy space of a type
    /// Keyjar does not know is taken as an HTTP proxy (the only kind that challenges).
    public init(_ space: URLProtectionSpace) {
        if let keyjar = space as? KeyjarProtectionSpace {
            self = keyjar.space
            return
        }
        let proxyType = space.isProxy() ? ProxyType(foundation: space.proxyType) ?? .http : .none
        self.init(
            host: space.host,
            port: space.port,
            protocol: space.protocol.map(Self.scheme(foundation:)) ?? proxyType.rawValue,
            realm: space.realm,
            authenticationMethod: AuthenticationMethod(foundation: space.authenticationMethod),
            proxyType: proxyType
        )
    }

    /// Foundation's form of this space, compared by value (``KeyjarProtectionSpace``).
    public var foundationSpace: URLProtectionSpace { KeyjarProtectionSpace(self) }

    // Foundation deprecates its FTP constants; these are their values on Linux.
    static let ftpConstant = "NSURLProtectionSpaceFTP"

    /// A server space's protocol: a scheme as given, or the scheme a Foundation constant names.
    private static func scheme(foundation value: String) -> String {
        switch value {
        case NSURLProtectionSpaceHTTP: "http"
        case NSURLProtectionSpaceHTTPS: "https"
        case ProtectionSpace.ftpConstant: "ftp"
        default: value
        }
    }
}

extension ProtectionSpace.ProxyType {
    static let ftpProxyConstant = "NSURLProtectionSpaceFTPProxy"

    /// From a `URLProtectionSpace`'s proxy type: Foundation's constants (their Linux values) or
    /// Apple's strings, in any case; nil for one Keyjar does not know.
    init?(foundation type: String?) {
        guard let type else { return nil }
        switch type {
        case NSURLProtectionSpaceHTTPProxy: self = .http
        case NSURLProtectionSpaceHTTPSProxy: self = .https
        case Self.ftpProxyConstant: self = .ftp
        case NSURLProtectionSpaceSOCKSProxy: self = .socks
        default:
            switch type.lowercased() {
            case "http": self = .http
            case "https": self = .https
            case "ftp": self = .ftp
            case "socks", "socksv5": self = .socks
            default: return nil
            }
        }
    }

    /// Foundation's constant for this proxy type; nil for `.none`.
    var foundation: String? {
        switch self {
        case .none: nil
        case .http: NSURLProtectionSpaceHTTPProxy
        case .https: NSURLProtectionSpaceHTTPSProxy
        case .ftp: Self.ftpProxyConstant
        case .socks: NSURLProtectionSpaceSOCKSProxy
        }
    }
}

/// The authentication method of a protection space whose credential is an OAuth 2 bearer token
/// (RFC 6750): Keyjar's addition to Foundation's `NSURLAuthenticationMethod…` strings, for a
/// `WWW-Authenticate: Bearer` challenge. The credential's password is the token; its user may be
/// empty.
public let NSURLAuthenticationMethodHTTPBearer = "NSURLAuthenticationMethodHTTPBearer"

extension ProtectionSpace.AuthenticationMethod {
    // Foundation on Linux marks these two constants unavailable; their values are Apple's.
    static let clientCertificateMethod = "NSURLAuthenticationMethodClientCertificate"
    static let serverTrustMethod = "NSURLAuthenticationMethodServerTrust"

    /// From Foundation's `NSURLAuthenticationMethod…` strings.
    public init(foundation method: String) {
        switch method {
        case NSURLAuthenticationMethodHTTPBasic: self = .httpBasic
        case NSURLAuthenticationMethodHTTPDigest: self = .httpDigest
        case NSURLAuthenticationMethodHTMLForm: self = .htmlForm
        case NSURLAuthenticationMethodNTLM: self = .ntlm
        case NSURLAuthenticationMethodNegotiate: self = .negotiate
        case Self.clientCertificateMethod: self = .clientCertificate
        case Self.serverTrustMethod: self = .serverTrust
        case NSURLAuthenticationMethodHTTPBearer: self = .httpBearer
        default: self = .default
        }
    }

    public var foundation: String {
        switch self {
        case .default: return NSURLAuthenticationMethodDefault
        case .httpBasic: return NSURLAuthenticationMethodHTTPBasic
        case .httpDigest: return NSURLAuthenticationMethodHTTPDigest
        case .htmlForm: return NSURLAuthenticationMethodHTMLForm
        case .ntlm: return NSURLAuthenticationMethodNTLM
        case .negotiate: return NSURLAuthenticationMethodNegotiate
        case .clientCertificate: return Self.clientCertificateMethod
        case .serverTrust: return Self.serverTrustMethod
        case .httpBearer: return NSURLAuthenticationMethodHTTPBearer
        }
    }
}
