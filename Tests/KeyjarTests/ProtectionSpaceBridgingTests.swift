import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import Testing

/// Foundation's spaces and Keyjar's: Foundation on Linux's constants are read, and the spaces
/// Keyjar hands out (to delegates, in `allCredentials`) equal the ones a program builds.
struct ProtectionSpaceBridgingTests {
    /// Foundation on Linux's proxy constants are strings of their own
    /// (`"NSURLProtectionSpaceHTTPProxy"`), Apple's are `"http"`, `"SOCKS"`…: both name a proxy.
    @Test(arguments: [
        (NSURLProtectionSpaceHTTPProxy, ProtectionSpace.ProxyType.http),
        (NSURLProtectionSpaceHTTPSProxy, .https),
        // NSURLProtectionSpaceFTPProxy's value, its constant being deprecated.
        ("NSURLProtectionSpaceFTPProxy", .ftp),
        (NSURLProtectionSpaceSOCKSProxy, .socks),
        ("http", .http),
        ("HTTPS", .https),
        ("SOCKS", .socks),
    ])
    func aProxySpaceBuiltWithFoundationsConstantsIsThatProxy(type: String, proxyType: ProtectionSpace.ProxyType) {
        let built = URLProtectionSpace(
            proxyHost: "Proxy.LAN",
            port: 3128,
            type: type,
            realm: "Squid",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
        let space = ProtectionSpace(built)
        #expect(space.isProxy && space.proxyType == proxyType)
        #expect(space.host == "proxy.lan" && space.port == 3128 && space.realm == "Squid")

        // What a delegate is handed for that proxy's challenge equals the space built, and
        // names its type with Foundation's constant.
        let handed = ProtectionSpace(
            host: "proxy.lan",
            port: 3128,
            protocol: "http",
            realm: "Squid",
            authenticationMethod: .httpBasic,
            proxyType: proxyType
        ).foundationSpace
        #expect(handed == built)
        #expect(handed.isEqual(built))
        #expect(handed.isProxy() && handed.proxyType == Self.constant(for: proxyType))
        #expect(handed.protocol == nil)
        // Another realm, another port or a server is another space.
        for other in [
            URLProtectionSpace(
                proxyHost: "proxy.lan",
                port: 3128,
                type: type,
                realm: "Other",
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic
            ),
            URLProtectionSpace(
                proxyHost: "proxy.lan",
                port: 3129,
                type: type,
                realm: "Squid",
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic
            ),
            URLProtectionSpace(
                host: "proxy.lan",
                port: 3128,
                protocol: "http",
                realm: "Squid",
                authenticationMethod: NSURLAuthenticationMethodHTTPBasic
            ),
        ] {
            #expect(handed != other)
        }
    }

    @Test func aServerSpaceBuiltWithFoundationsProtocolConstantsIsThatScheme() {
        let built = URLProtectionSpace(
            host: "Example.com",
            port: 443,
            protocol: NSURLProtectionSpaceHTTPS,
            realm: "Admin",
            authenticationMethod: NSURLAuthenticationMethodHTTPDigest
        )
        let space = ProtectionSpace(built)
        #expect(space.protocol == "https" && space.port == 443 && !space.isProxy)
        let ftp = ProtectionSpace(
            URLProtectionSpace(
                host: "files.example",
                port: 0,
                protocol: "NSURLProtectionSpaceFTP",  // NSURLProtectionSpaceFTP, deprecated
                realm: nil,
                authenticationMethod: nil
            )
        )
        #expect(ftp.protocol == "ftp" && ftp.port == 21)

        let handed = ProtectionSpace(
            host: "example.com",
            protocol: "https",
            realm: "Admin",
            authenticationMethod: .httpDigest
        )
        .foundationSpace
        #expect(handed == built)
        #expect(handed.protocol == "https")
        // Handed out twice, the two are one dictionary key.
        let again = space.foundationSpace
        #expect(handed.hash == again.hash)
        #expect([handed: "a"][again] == "a")
    }

    private static func constant(for type: ProtectionSpace.ProxyType) -> String? {
        switch type {
        case .http: NSURLProtectionSpaceHTTPProxy
        case .https: NSURLProtectionSpaceHTTPSProxy
        case .ftp: "NSURLProtectionSpaceFTPProxy"
        case .socks: NSURLProtectionSpaceSOCKSProxy
        case .none: nil
        }
    }
}
