import Crypto
public import Foundation
import KeyjarPlatform
import SwiftASN1
import X509

/// What a person needs to decide about a certificate: who it names, who vouches for it, when it
/// is valid, its SHA-256 fingerprint, and the certificate itself (DER). Parsed with
/// swift-certificates.
///
/// ```swift
/// let summary = try CertificateSummary(pem: pemText)
/// print(summary.subject, summary.sha256Fingerprint)   // CN=example.com  AB:CD:…
/// ```
public struct CertificateSummary: Sendable, Hashable, CustomStringConvertible {
    /// The subject's distinguished name, as `CN=…,O=…`.
    public let subject: String
    /// The issuer's distinguished name.
    public let issuer: String
    public let notValidBefore: Date
    public let notValidAfter: Date
    /// SHA-256 of the DER certificate, upper-case hex bytes joined by colons (as
    /// `openssl x509 -fingerprint -sha256` prints it).
    public let sha256Fingerprint: String
    /// The certificate, DER-encoded.
    public let der: Data
    /// libcurl's pin for the certificate's public key: `sha256//` and the base64 SHA-256 of its
    /// SubjectPublicKeyInfo. A connection pinned to it is refused during the handshake, before
    /// anything is sent, by a server holding another key.
    package let publicKeyPin: String

    /// - Throws: swift-certificates' error when the bytes are not an X.509 certificate.
    public init(der: Data) throws {
        let certificate = try Certificate(derEncoded: Array(der))
        subject = certificate.subject.description
        issuer = certificate.issuer.description
        notValidBefore = certificate.notValidBefore
        notValidAfter = certificate.notValidAfter
        sha256Fingerprint = Self.fingerprint(of: der)
        self.der = der
        var serializer = DER.Serializer()
        try serializer.serialize(certificate.publicKey)
        publicKeyPin = "sha256//" + Data(SHA256.hash(data: serializer.serializedBytes)).base64EncodedString()
    }

    /// The first certificate of a PEM text.
    public init(pem: String) throws {
        var serializer = DER.Serializer()
        try serializer.serialize(try Certificate(pemEncoded: pem))
        try self.init(der: Data(serializer.serializedBytes))
    }

    /// The fingerprint of DER bytes in the form ``sha256Fingerprint`` uses.
    public static func fingerprint(of der: Data) -> String {
        SHA256.hash(data: der).map { Hex.encode([$0], uppercase: true) }.joined(separator: ":")
    }

    /// A fingerprint as a person may type it (any case, with or without colons or spaces) in
    /// the form ``sha256Fingerprint`` uses; nil unless it is 32 bytes of hex.
    public static func canonicalFingerprint(_ text: String) -> String? {
        let digits = text.uppercased().filter { $0 != ":" && $0 != " " }
        guard digits.count == 64, digits.allSatisfy(\.isHexDigit) else { return nil }
        var pairs: [String] = []
        var index = digits.startIndex
        while index < digits.endIndex {
            let next = digits.index(index, offsetBy: 2)
            pairs.append(String(digits[index..<next]))
            index = next
        }
        return pairs.joined(separator: ":")
    }

    public var description: String {
        "\(subject) (issued by \(issuer), valid \(Self.day(notValidBefore)) to \(Self.day(notValidAfter))), SHA-256 \(sha256Fingerprint)"
    }

    private static func day(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day())
    }
}
