public import Foundation
public import FoundationNetworking

/// A server's certificate as a server-trust challenge shows it: the chain the server presented
/// (its own certificate first) and, when default handling would refuse it, why.
///
/// The challenge comes when the certificate fails verification, and, for a delegate that says
/// it can authenticate against `NSURLAuthenticationMethodServerTrust`, before the load's first
/// request to every https server (see
/// ``LoaderConnectionLegacyAuthenticationDelegate/connection(_:canAuthenticateAgainst:)``).
///
/// Answering the challenge with any credential trusts exactly this certificate (its key, checked
/// during every later handshake, and its fingerprint) for this host and port, by the
/// credential's persistence: `.none` for this load, `.forSession` for every loader of the
/// process, `.permanent` in keyjard for every process of the user (listed by
/// `keyjar credential list --method server-trust`).
public struct ServerTrust: Sendable, Hashable {
    public let host: String
    public let port: Int
    /// The presented chain, the server's certificate first.
    public let certificates: [CertificateSummary]
    /// Why verification failed, in libcurl's (OpenSSL's) words; empty when default handling
    /// trusts the certificate (``isTrusted``).
    public let failureReason: String

    /// Whether the handshake trusted the certificate: it passed verification against the
    /// system's certificate authorities, or its key is one the loader already trusts for this
    /// host and port (accepted earlier in the load, or for the session). The challenge's
    /// `error` is nil then. Default handling also trusts a certificate whose decision the
    /// credential storage keeps (`.permanent`, in keyjard), when the load may read it.
    public var isTrusted: Bool { failureReason.isEmpty }

    /// The server's own certificate, the one a decision is about.
    public var leaf: CertificateSummary? { certificates.first }

    public init(host: String, port: Int, certificates: [CertificateSummary], failureReason: String) {
        self.host = host
        self.port = port
        self.certificates = certificates
        self.failureReason = failureReason
    }
}

/// The protection space of a server-trust challenge, carrying what the delegate decides on
/// (Foundation on Linux has no `SecTrust`, so `serverTrust` is Keyjar's value).
///
/// ```swift
/// func connection(_ c: LoaderConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
///     if let space = challenge.protectionSpace as? ServerTrustProtectionSpace,
///        space.serverTrust.leaf?.sha256Fingerprint == pinned {
///         challenge.sender?.use(URLCredential(user: "", password: "", persistence: .permanent), for: challenge)
///     } else {
///         challenge.sender?.performDefaultHandling(for: challenge)
///     }
/// }
/// ```
public final class ServerTrustProtectionSpace: URLProtectionSpace, @unchecked Sendable {
    // @unchecked: immutable after init, like its superclass's state.
    public let serverTrust: ServerTrust

    public init(serverTrust: ServerTrust) {
        self.serverTrust = serverTrust
        super.init(
            host: serverTrust.host,
            port: serverTrust.port,
            protocol: "https",
            realm: nil,
            authenticationMethod: LoaderAuthenticationMethod.serverTrust
        )
    }

    public required init?(coder aDecoder: NSCoder) {
        nil
    }
}
