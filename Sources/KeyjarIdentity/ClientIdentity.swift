import COpenSSL
public import Foundation
public import FoundationNetworking

/// A TLS client identity: a certificate (with its chain) and its private key, for servers that
/// ask for a client certificate.
///
/// Read from a PEM file (certificates and key, the key possibly encrypted) or a PKCS#12 bundle
/// by libcrypto, and kept as PEM text: the certificate that belongs to the key first, then the
/// chain, then the key as unencrypted PKCS#8. In the shared store it is a credential of method
/// client-certificate whose "password" is that text, so the private key lives in the Secret
/// Service like any password and never in SQLite.
///
/// ```swift
/// let identity = try ClientIdentity(contentsOf: URL(fileURLWithPath: "alice.p12"), passphrase: "…")
/// challenge.sender?.use(identity.credential(persistence: .permanent), for: challenge)
/// ```
public struct ClientIdentity: Sendable, Hashable, CustomStringConvertible {
    /// Why an identity could not be read. Its description never contains key material or the
    /// passphrase.
    public struct ReadError: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
        /// Whether a (different) passphrase might open it: it is encrypted, or not readable at all.
        public var mightNeedPassphrase = false
    }

    /// The certificate that belongs to the key.
    public let certificate: CertificateSummary
    /// The certificates, PEM, the one that belongs to the key first.
    package let certificatesPEM: String
    /// The private key, unencrypted PKCS#8 PEM.
    package let privateKeyPEM: String

    /// Reads a PEM text or PKCS#12 bundle (told apart by content).
    /// - Throws: ``ReadError`` saying what is missing or wrong.
    public init(data: Data, passphrase: String? = nil) throws(ReadError) {
        let isPEM = data.range(of: Data("-----BEGIN ".utf8)) != nil
        var certificates: UnsafeMutablePointer<CChar>?
        var certificatesLength = 0
        var key: UnsafeMutablePointer<CChar>?
        var keyLength = 0
        var reason = [CChar](repeating: 0, count: 256)
        let status = data.withUnsafeBytes { bytes in
            keyjar_read_identity(
                bytes.bindMemory(to: UInt8.self).baseAddress,
                bytes.count,
                isPEM ? 0 : 1,
                passphrase,
                &certificates,
                &certificatesLength,
                &key,
                &keyLength,
                &reason,
                reason.count
            )
        }
        defer {
            free(certificates)
            keyjar_free_secret(key, keyLength)
        }
        guard Int(status) == KEYJAR_IDENTITY_OK, let certificates, let key else {
            throw ReadError(
                description: Self.explain(status, isPEM: isPEM, passphrase: passphrase, reason: reason),
                mightNeedPassphrase: Int(status) == KEYJAR_IDENTITY_UNREADABLE
            )
        }
        certificatesPEM = String(cString: certificates)
        privateKeyPEM = String(cString: key)
        do {
            certificate = try CertificateSummary(pem: certificatesPEM)
        } catch {
            throw ReadError(description: "the certificate could not be parsed: \(error)")
        }
    }

    public init(contentsOf url: URL, passphrase: String? = nil) throws(ReadError) {
        let data: Data
        do {
            data = try Data(contentsOf: url)
        } catch {
            // The system's reason, not Foundation's "The operation could not be completed".
            throw ReadError(description: "cannot read \(url.path): \(Self.reasonUnreadable(url.path))")
        }
        try self.init(data: data, passphrase: passphrase)
    }

    /// Why a file cannot be read, as the system says it (errno).
    private static func reasonUnreadable(_ path: String) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        defer { close(descriptor) }
        var buffer: UInt8 = 0
        return read(descriptor, &buffer, 1) < 0 ? String(cString: strerror(errno)) : "it cannot be read"
    }

    /// The identity as stored in a credential's password (PEM, as written by this type).
    public init?(credential: URLCredential) {
        guard let text = credential.password, let identity = try? ClientIdentity(data: Data(text.utf8)) else {
            return nil
        }
        self = identity
    }

    /// A credential that answers a client-certificate challenge with this identity; its user is
    /// the certificate's subject.
    public func credential(persistence: URLCredential.Persistence) -> URLCredential {
        URLCredential(user: label, password: certificatesPEM + privateKeyPEM, persistence: persistence)
    }

    /// How the identity is named in listings: its certificate's subject.
    public var label: String { certificate.subject }

    public var description: String {
        "ClientIdentity(\(certificate.subject), SHA-256 \(certificate.sha256Fingerprint), key: <hidden>)"
    }

    private static func explain(_ status: Int32, isPEM: Bool, passphrase: String?, reason: [CChar]) -> String {
        let detail = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let because = detail.isEmpty ? "" : " (\(detail))"
        switch Int(status) {
        case KEYJAR_IDENTITY_UNREADABLE:
            if isPEM {
                return
                    "the private key could not be read; is it encrypted and the passphrase \(passphrase == nil ? "missing" : "wrong")?\(because)"
            }
            return "not a PEM file or a PKCS#12 bundle that this passphrase opens\(because)"
        case KEYJAR_IDENTITY_NO_CERTIFICATE: return "it holds no certificate"
        case KEYJAR_IDENTITY_NO_KEY: return "it holds no private key (put the certificate and its key in one PEM file)"
        case KEYJAR_IDENTITY_KEY_MISMATCH: return "the private key belongs to none of its certificates"
        default: return "out of memory"
        }
    }
}
