import CCurl
import Foundation
import KeyjarTransfer

/// One TLS handshake and nothing else: what the server presented and whether it asked for a
/// client certificate, with nothing sent to the server beyond the handshake.
///
/// Run with verification off after a load failed in TLS: libcurl reports neither the chain
/// nor the certificate request when a verifying handshake fails (OpenSSL aborts before it
/// collects the chain). Run with the load's own TLS settings before its first request to a
/// server, to show the delegate that server's certificate (a server-trust challenge on every
/// TLS connection).
struct TLSProbe {
    /// How the handshake is checked.
    enum Verification {
        /// Not at all: whatever the server presents is read.
        case off
        /// As the load's transfers check it: the system's CAs, or (when the load trusts
        /// certificates that fail verification) verification off and these keys pinned.
        case asTheLoad(acceptedKeyPins: [String], anchors: TrustAnchors)
    }

    /// The chain the server presented, its own certificate first (empty when the handshake
    /// did not get that far).
    var certificates: [CertificateSummary] = []
    /// Whether the server sent a CertificateRequest.
    var askedForClientCertificate = false
    /// How the handshake ended, in libcurl's terms.
    var result = CurlResult(
        code: CURLE_FAILED_INIT.rawValue,
        message: "libcurl could not start a handshake",
        osErrno: 0
    )

    /// Connects to `url`'s host and port over `proxy` (nil: libcurl reads the environment),
    /// within `timeout`, offering `clientIdentity` if the server asks for one. Blocks; runs on
    /// the connection's own serial work, never the engine's.
    static func run(
        _ url: URL,
        verification: Verification = .off,
        clientIdentity: ClientIdentity? = nil,
        proxy: URL?,
        proxyAuthentication: (scheme: Int, user: String, password: String)?,
        timeout: TimeInterval
    ) -> TLSProbe {
        guard let easy = curl_easy_init() else { return TLSProbe() }
        defer { curl_easy_cleanup(easy) }
        let requests = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        requests.initialize(to: 0)
        defer { requests.deallocate() }
        let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        defer { errorBuffer.deallocate() }
        func set(_ option: CURLoption, _ value: Int) { _ = keyjar_easy_setopt_long(easy, option, value) }
        func set(_ option: CURLoption, _ value: String) {
            _ = value.withCString { keyjar_easy_setopt_string(easy, option, $0) }
        }
        var components = URLComponents()
        components.scheme = "https"
        components.host = url.host
        components.port = url.port
        components.path = "/"
        set(CURLOPT_URL, components.url?.absoluteString ?? url.absoluteString)
        set(CURLOPT_PROTOCOLS_STR, "https")
        set(CURLOPT_NOSIGNAL, 1)
        set(CURLOPT_CONNECT_ONLY, 1)
        switch verification {
        case .off:
            set(CURLOPT_SSL_VERIFYPEER, 0)
            set(CURLOPT_SSL_VERIFYHOST, 0)
            CurlTLSOptions.apply(
                pins: [],
                anchors: .system,
                identity: clientIdentity.map(ClientCertificate.init),
                to: easy
            )
        case .asTheLoad(let pins, let anchors):
            CurlTLSOptions.apply(
                pins: pins,
                anchors: anchors,
                identity: clientIdentity.map(ClientCertificate.init),
                to: easy
            )
        }
        set(CURLOPT_CERTINFO, 1)
        set(CURLOPT_FRESH_CONNECT, 1)
        set(CURLOPT_FORBID_REUSE, 1)
        set(CURLOPT_CONNECTTIMEOUT_MS, Int(min(max(timeout, 0.001) * 1000, Double(Int32.max))))
        if let proxy { set(CURLOPT_PROXY, proxy.absoluteString) }
        if let proxyAuthentication {
            set(CURLOPT_PROXYAUTH, proxyAuthentication.scheme)
            set(CURLOPT_PROXYUSERNAME, proxyAuthentication.user)
            set(CURLOPT_PROXYPASSWORD, proxyAuthentication.password)
        }
        _ = keyjar_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        keyjar_easy_trace_certificate_requests(easy, requests)
        let code = curl_easy_perform(easy)

        var probe = TLSProbe()
        var osErrno = 0
        _ = keyjar_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &osErrno)
        let message = String(cString: errorBuffer)
        probe.result = CurlResult(
            code: code.rawValue,
            message: message.isEmpty ? String(cString: curl_easy_strerror(code)) : message,
            osErrno: osErrno
        )
        probe.askedForClientCertificate = requests.pointee > 0
        var raw: UnsafeMutableRawPointer?
        guard keyjar_easy_getinfo_pointer(easy, CURLINFO_CERTINFO, &raw) == CURLE_OK, let raw else { return probe }
        let info = raw.assumingMemoryBound(to: curl_certinfo.self).pointee
        for index in 0..<Int(info.num_of_certs) {
            var field = info.certinfo[index]
            while let entry = field {
                let text = String(cString: entry.pointee.data)
                if text.hasPrefix("Cert:"), let summary = try? CertificateSummary(pem: String(text.dropFirst(5))) {
                    probe.certificates.append(summary)
                }
                field = entry.pointee.next
            }
        }
        return probe
    }
}

extension ClientCertificate {
    /// What libcurl offers of `identity`: its chain and key as PEM text.
    init(_ identity: ClientIdentity) {
        self.init(certificatesPEM: identity.certificatesPEM, privateKeyPEM: identity.privateKeyPEM)
    }
}
