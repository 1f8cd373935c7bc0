import CCurl
public import FoundationEssentials

/// The certificate authorities a loader's TLS connections are verified against: the system's
/// (libcurl's bundle and directory), others instead of its bundle, as curl's `--cacert` and
/// `--capath` (and its `CURL_CA_BUNDLE`, `SSL_CERT_FILE`, `SSL_CERT_DIR`), or the system's and a
/// few more for one program — a company's CA, or a development CA such as mkcert's — without
/// turning verification off or trusting each server by its certificate.
public struct TrustAnchors: Sendable, Hashable {
    package enum Source: Sendable, Hashable {
        case system
        /// libcurl's CAINFO and CAPATH: a PEM bundle and a hashed directory (c_rehash).
        case replacing(file: String?, directory: String?)
        /// The system's bundle and the added certificates, as one PEM blob.
        case adding(bundle: [UInt8])
    }

    package let source: Source

    /// The system's: what libcurl trusts by default.
    public static let system = TrustAnchors(source: .system)

    /// As curl's `--cacert` and `--capath` set them: the PEM bundle `file` in place of the
    /// system's bundle, the hashed `directory` in place of the system's directory; what is not
    /// given stays the system's (as with curl: `--capath` alone keeps the default bundle).
    public static func replacing(file: String?, directory: String? = nil) -> TrustAnchors {
        TrustAnchors(source: file == nil && directory == nil ? .system : .replacing(file: file, directory: directory))
    }

    /// The system's, and the certificates in the PEM file `file` besides. Read now: a file that
    /// cannot be read, or holds no certificate, is an error here rather than a failed handshake.
    public static func adding(file: String) throws -> TrustAnchors {
        guard let added = FileManager.default.contents(atPath: file) else {
            throw TrustAnchorsError(description: "cannot read the certificates in \(file)")
        }
        guard String(decoding: added, as: UTF8.self).contains("-----BEGIN CERTIFICATE-----") else {
            throw TrustAnchorsError(description: "\(file) holds no PEM certificate")
        }
        var bundle = systemBundle.map { Array($0) } ?? []
        bundle += Array("\n".utf8) + Array(added) + Array("\n".utf8)
        // A libcurl that cannot take a bundle from memory (before 7.77, or not on OpenSSL)
        // would verify against the system's alone: said here, not as an untrusted server later.
        guard let probe = curl_easy_init() else {
            throw TrustAnchorsError(description: "libcurl could not be initialised")
        }
        defer { curl_easy_cleanup(probe) }
        let status = bundle.withUnsafeBytes {
            keyjar_easy_setopt_blob(probe, CURLOPT_CAINFO_BLOB, $0.baseAddress, $0.count)
        }
        guard status == CURLE_OK else {
            throw TrustAnchorsError(
                description:
                    "this libcurl cannot add CA certificates to the system's (\(String(cString: curl_easy_strerror(status))))"
            )
        }
        return TrustAnchors(source: .adding(bundle: bundle))
    }

    /// As curl reads its environment when given neither `--cacert` nor `--capath`:
    /// `CURL_CA_BUNDLE`, else `SSL_CERT_DIR` and `SSL_CERT_FILE`; the system's when none is set.
    public static func fromEnvironment(
        _ environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> TrustAnchors {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let bundle = value("CURL_CA_BUNDLE") { return .replacing(file: bundle) }
        return .replacing(file: value("SSL_CERT_FILE"), directory: value("SSL_CERT_DIR"))
    }

    /// libcurl's own bundle, which `CAINFO_BLOB` would otherwise replace.
    private static var systemBundle: Data? {
        guard let path = keyjar_version_info()?.pointee.cainfo.map({ String(cString: $0) }) else { return nil }
        return FileManager.default.contents(atPath: path)
    }

    /// Sets them on a transfer or a probe (libcurl copies what it is given).
    package func apply(to easy: UnsafeMutableRawPointer) {
        switch source {
        case .system: break
        case .replacing(let file, let directory):
            if let file { _ = keyjar_easy_setopt_string(easy, CURLOPT_CAINFO, file) }
            if let directory { _ = keyjar_easy_setopt_string(easy, CURLOPT_CAPATH, directory) }
        case .adding(let bundle):
            bundle.withUnsafeBytes { bytes in
                _ = keyjar_easy_setopt_blob(easy, CURLOPT_CAINFO_BLOB, bytes.baseAddress, bytes.count)
            }
        }
    }
}

/// Trust anchors that cannot be used, and why.
public struct TrustAnchorsError: Error, Sendable, CustomStringConvertible {
    public var description: String
}
