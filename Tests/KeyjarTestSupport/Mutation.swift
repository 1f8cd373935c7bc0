import Foundation

/// Mutations for the randomised tests of parsers and decoders: a few byte edits of a valid
/// input (deletions, insertions from bytes that parsers care about, overwrites, repeats).
public enum Mutation {
    /// Bytes that cookie parsers care about.
    public static let alphabet: [UInt8] = Array("=;, \t\"./-_:aZ0\u{1}\r\n\u{7F}\u{0}".utf8) + [0xC3, 0xA9, 0xFF]

    /// One to six edits of `input`, inserting bytes of `alphabet`.
    public static func mutate(
        _ input: String,
        alphabet: [UInt8] = Mutation.alphabet,
        using random: inout SplitMix64
    ) -> String {
        var bytes = Array(input.utf8)
        for _ in 0..<Int.random(in: 1...6, using: &random) {
            let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<4, using: &random) {
            case 0 where !bytes.isEmpty: bytes.remove(at: position)
            case 1: bytes.insert(alphabet.randomElement(using: &random) ?? 0, at: position)
            case 2 where !bytes.isEmpty: bytes[position] = UInt8.random(in: 0...255, using: &random)
            default: bytes.insert(contentsOf: bytes.prefix(8), at: position)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    public static func randomBytesString(length: Int, using random: inout SplitMix64) -> String {
        String(decoding: (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }, as: UTF8.self)
    }

}
