import CCurl

/// The TLS options a load gives libcurl, set the same way on its transfers and on the probe
/// handshake that shows the delegate a certificate (the loader's `TLSProbe`), so that the
/// probe meets the server as the load will.
package enum CurlTLSOptions {
    /// `pins`: the public keys a delegate accepted for the host (libcurl's `PINNEDPUBLICKEY`
    /// form). A pinned key replaces the CA and host-name checks: the delegate trusted exactly
    /// that certificate, which those checks had refused. `identity`: the client certificate,
    /// handed over as in-memory blobs (libcurl copies them; the key text stays in the identity).
    /// `anchors`: the certificate authorities verification trusts (the loader's).
    package static func apply(
        pins: [String],
        anchors: TrustAnchors,
        identity: ClientCertificate?,
        to easy: UnsafeMutableRawPointer
    ) {
        anchors.apply(to: easy)
        if !pins.isEmpty {
            _ = keyjar_easy_setopt_long(easy, CURLOPT_SSL_VERIFYPEER, 0)
            _ = keyjar_easy_setopt_long(easy, CURLOPT_SSL_VERIFYHOST, 0)
            _ = pins.joined(separator: ";").withCString { keyjar_easy_setopt_string(easy, CURLOPT_PINNEDPUBLICKEY, $0) }
        }
        guard let identity else { return }
        _ = keyjar_easy_setopt_string(easy, CURLOPT_SSLCERTTYPE, "PEM")
        _ = keyjar_easy_setopt_string(easy, CURLOPT_SSLKEYTYPE, "PEM")
        for (option, text) in [
            (CURLOPT_SSLCERT_BLOB, identity.certificatesPEM), (CURLOPT_SSLKEY_BLOB, identity.privateKeyPEM),
        ] {
            var copy = text
            copy.withUTF8 { bytes in _ = keyjar_easy_setopt_blob(easy, option, bytes.baseAddress, bytes.count) }
        }
    }
}

/// A client certificate chain and its private key, in PEM, as libcurl takes them. Printed,
/// debugged or dumped, it shows no key.
package struct ClientCertificate: Sendable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    package var certificatesPEM: String
    package var privateKeyPEM: String

    package init(certificatesPEM: String, privateKeyPEM: String) {
        self.certificatesPEM = certificatesPEM
        self.privateKeyPEM = privateKeyPEM
    }

    package var description: String { "ClientCertificate(\(certificatesPEM.utf8.count) bytes of PEM, key: <hidden>)" }
    package var debugDescription: String { description }
    package var customMirror: Mirror { Mirror(self, children: ["description": description]) }
}
