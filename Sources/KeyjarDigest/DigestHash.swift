import COpenSSL
import Crypto
import KeyjarAuth
import KeyjarPlatform

/// The hashes of Digest authentication (RFC 7616 §3.4): MD5 and SHA-256 from swift-crypto;
/// SHA-512/256 (FIPS 180-4 §6.7), which swift-crypto does not offer, from OpenSSL's libcrypto,
/// already linked for libcurl and client identities.
enum DigestHash {
    static func md5(_ data: [UInt8]) -> [UInt8] { Array(Insecure.MD5.hash(data: data)) }

    static func sha256(_ data: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: data)) }

    static func sha512_256(_ data: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        let succeeded = data.withUnsafeBytes { bytes in
            output.withUnsafeMutableBufferPointer { out in
                EVP_Digest(bytes.baseAddress, bytes.count, out.baseAddress, &length, EVP_sha512_256(), nil)
            }
        }
        // Only a libcrypto built without SHA-2 could fail; Keyjar's dependencies need it anyway.
        precondition(succeeded == 1 && length == 32, "libcrypto computed no SHA-512/256")
        return Array(output.prefix(32))
    }
}

extension DigestAlgorithm {
    /// H(data) of RFC 7616 §3.4: the lower-case hex of the hash.
    func hashHex(_ data: [UInt8]) -> String { Hex.encode(hash(data)) }

    func hashHex(_ text: String) -> String { hashHex(Array(text.utf8)) }

    func hash(_ data: [UInt8]) -> [UInt8] {
        switch self {
        case .md5, .md5Session: return DigestHash.md5(data)
        case .sha256, .sha256Session: return DigestHash.sha256(data)
        case .sha512_256, .sha512_256Session: return DigestHash.sha512_256(data)
        }
    }
}
