import CCurl
import Foundation

/// One TLS handshake and nothing else, after a load failed in TLS: what the server presented and
/// whether it asked for a client certificate. libcurl reports neither when a verifying
/// handshake fails (OpenSSL aborts before it collects the chain), so the loader asks again with
/// verification off and no request at all: nothing is sent to the server.
struct TLSProbe {
    /// The chain the server presented, its own certificate first (empty when the handshake
    /// did not get that far).
    var certificates: [CertificateSummary] = []
    /// Whether the server sent a CertificateRequest.
    var askedForClientCertificate = false

    /// Connects to `url`'s host and port over `proxy` (nil: libcurl reads the environment),
    /// within `timeout`. Blocks; runs on the connection's own serial work, never the engine's.
    static func run(
        _ url: URL,
        proxy: URL?,
        proxyAuthentication: (scheme: Int, user: String, password: String)?,
        timeout: TimeInterval
    ) -> TLSProbe {
        guard let easy = curl_easy_init() else { return TLSProbe() }
        defer { curl_easy_cleanup(easy) }
        let requests = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
        requests.initialize(to: 0)
        defer { requests.deallocate() }
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
        set(CURLOPT_SSL_VERIFYPEER, 0)
        set(CURLOPT_SSL_VERIFYHOST, 0)
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
        keyjar_easy_trace_certificate_requests(easy, requests)
        _ = curl_easy_perform(easy)

        var probe = TLSProbe()
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
