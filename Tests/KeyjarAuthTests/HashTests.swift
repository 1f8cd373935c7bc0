import Foundation
import KeyjarTestSupport
import Testing

@testable import KeyjarAuth
@testable import KeyjarDigest

/// The three hashes (swift-crypto and libcrypto, as Keyjar calls them) against their published test vectors, then against Python's hashlib for
/// lengths around the padding boundaries and for random messages.
struct HashTests {
    @Test(arguments: [
        ("", "d41d8cd98f00b204e9800998ecf8427e"),
        ("a", "0cc175b9c0f1b6a831c399e269772661"),
        ("abc", "900150983cd24fb0d6963f7d28e17f72"),
        ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
        ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
        ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
        (String(repeating: "1234567890", count: 8), "57edf4a22be3c955ac49da2e2107b67a"),
    ])
    func md5RFC1321Suite(message: String, expected: String) {
        #expect(hex(DigestHash.md5(Array(message.utf8))) == expected)
    }

    static let nist448 = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
    static let nist896 =
        "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"

    @Test func sha256NISTVectors() {
        #expect(hex(DigestHash.sha256([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(
            hex(DigestHash.sha256(Array("abc".utf8)))
                == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        )
        #expect(
            hex(DigestHash.sha256(Array(Self.nist448.utf8)))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        )
        #expect(
            hex(DigestHash.sha256(Array(Self.nist896.utf8)))
                == "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        )
    }

    @Test func sha512_256NISTVectors() {
        #expect(hex(DigestHash.sha512_256([])) == "c672b8d1ef56ed28ab87c3622c5114069bdd3ad7b8f9737498d0c01ecef0967a")
        #expect(
            hex(DigestHash.sha512_256(Array("abc".utf8)))
                == "53048e2681941ef99b2e29b76b4c7dabe4c2d0c634fc6d46e0e2f13107e7af23"
        )
        #expect(
            hex(DigestHash.sha512_256(Array(Self.nist896.utf8)))
                == "3928e184fb8690f840da3988121d31be65cb9d3ef83ee6146feac861e19b563a"
        )
    }

    @Test func aMillionAs() {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(hex(DigestHash.md5(message)) == "7707d6ae4e027c70eea2a935c2296f21")
        #expect(hex(DigestHash.sha256(message)) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(
            hex(DigestHash.sha512_256(message)) == "9a59a052930187a97038cae692f30708aa6491923ef5194394dc68d56c74fb21"
        )
    }

    /// Each line of input is a hex message; python prints md5, sha256 and sha512_256 of each.
    static let hashlibScript = """
        import hashlib, sys
        for line in sys.stdin.read().split():
            data = bytes.fromhex(line) if line != "-" else b""
            print(hashlib.md5(data).hexdigest(), hashlib.sha256(data).hexdigest(),
                  hashlib.new("sha512_256", data).hexdigest())
        """

    /// Lengths where padding changes shape: around 55/56/64 for the 64-byte blocks, 111/112/128
    /// for SHA-512's 128-byte blocks; plus random lengths up to 300, all with random bytes.
    @Test func matchesPythonHashlibAroundBlockBoundaries() async throws {
        var random = SplitMix64(state: 7616)
        var lengths = [0, 1, 55, 56, 57, 63, 64, 65, 111, 112, 113, 119, 120, 127, 128, 129, 191, 192, 255, 256]
        lengths += (0..<40).map { _ in Int.random(in: 0...300, using: &random) }
        let messages = lengths.map { length in (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) } }
        let input = messages.map { $0.isEmpty ? "-" : hex($0) }.joined(separator: "\n")
        let lines = try await Python.run(Self.hashlibScript, input: input).split(separator: "\n")
        try #require(lines.count == messages.count)
        for (message, line) in zip(messages, lines) {
            let expected = line.split(separator: " ").map(String.init)
            #expect(
                [hex(DigestHash.md5(message)), hex(DigestHash.sha256(message)), hex(DigestHash.sha512_256(message))]
                    == expected,
                "length \(message.count)"
            )
        }
    }
}
