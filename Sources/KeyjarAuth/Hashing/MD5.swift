/// MD5 (RFC 1321), only because Digest authentication still names it: RFC 7616 keeps it as the
/// default algorithm for interoperability. Never use it for anything else.
enum MD5 {
    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]

    /// floor(abs(sin(i + 1)) * 2^32), written out so the table is exactly RFC 1321's.
    private static let constants: [UInt32] = [
        0xd76a_a478, 0xe8c7_b756, 0x2420_70db, 0xc1bd_ceee, 0xf57c_0faf, 0x4787_c62a, 0xa830_4613, 0xfd46_9501,
        0x6980_98d8, 0x8b44_f7af, 0xffff_5bb1, 0x895c_d7be, 0x6b90_1122, 0xfd98_7193, 0xa679_438e, 0x49b4_0821,
        0xf61e_2562, 0xc040_b340, 0x265e_5a51, 0xe9b6_c7aa, 0xd62f_105d, 0x0244_1453, 0xd8a1_e681, 0xe7d3_fbc8,
        0x21e1_cde6, 0xc337_07d6, 0xf4d5_0d87, 0x455a_14ed, 0xa9e3_e905, 0xfcef_a3f8, 0x676f_02d9, 0x8d2a_4c8a,
        0xfffa_3942, 0x8771_f681, 0x6d9d_6122, 0xfde5_380c, 0xa4be_ea44, 0x4bde_cfa9, 0xf6bb_4b60, 0xbebf_bc70,
        0x289b_7ec6, 0xeaa1_27fa, 0xd4ef_3085, 0x0488_1d05, 0xd9d4_d039, 0xe6db_99e5, 0x1fa2_7cf8, 0xc4ac_5665,
        0xf429_2244, 0x432a_ff97, 0xab94_23a7, 0xfc93_a039, 0x655b_59c3, 0x8f0c_cc92, 0xffef_f47d, 0x8584_5dd1,
        0x6fa8_7e4f, 0xfe2c_e6e0, 0xa301_4314, 0x4e08_11a1, 0xf753_7e82, 0xbd3a_f235, 0x2ad7_d2bb, 0xeb86_d391,
    ]

    static func hash(_ message: [UInt8]) -> [UInt8] {
        var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476)
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bitLength = UInt64(message.count) &* 8
        for index in 0..<8 { padded.append(UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(index)))) }

        var words = [UInt32](repeating: 0, count: 16)
        for blockStart in stride(from: 0, to: padded.count, by: 64) {
            for index in 0..<16 {
                let base = blockStart + index * 4
                words[index] = UInt32(padded[base]) | UInt32(padded[base + 1]) << 8
                    | UInt32(padded[base + 2]) << 16 | UInt32(padded[base + 3]) << 24
            }
            var (a, b, c, d) = state
            for round in 0..<64 {
                var f: UInt32
                let wordIndex: Int
                switch round {
                case 0..<16:
                    f = (b & c) | (~b & d)
                    wordIndex = round
                case 16..<32:
                    f = (d & b) | (~d & c)
                    wordIndex = (5 * round + 1) % 16
                case 32..<48:
                    f = b ^ c ^ d
                    wordIndex = (3 * round + 5) % 16
                default:
                    f = c ^ (b | ~d)
                    wordIndex = (7 * round) % 16
                }
                f = f &+ a &+ constants[round] &+ words[wordIndex]
                a = d
                d = c
                c = b
                b = b &+ f.rotatedLeft(by: shifts[round])
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(16)
        for word in [state.0, state.1, state.2, state.3] {
            for index in 0..<4 { digest.append(UInt8(truncatingIfNeeded: word >> (8 * UInt32(index)))) }
        }
        return digest
    }
}

extension FixedWidthInteger {
    @inline(__always)
    func rotatedLeft(by count: Self) -> Self { (self << count) | (self >> (Self(Self.bitWidth) - count)) }

    @inline(__always)
    func rotatedRight(by count: Self) -> Self { (self >> count) | (self << (Self(Self.bitWidth) - count)) }
}

/// Appends the Merkle–Damgård padding the SHA-2 family shares: 0x80, zeros, then the message
/// length in bits, big-endian, in a field of `lengthBytes` bytes.
func sha2Padded(_ message: [UInt8], blockSize: Int, lengthBytes: Int) -> [UInt8] {
    var padded = message
    padded.append(0x80)
    while padded.count % blockSize != blockSize - lengthBytes { padded.append(0) }
    let bitLength = UInt64(message.count) &* 8
    padded.append(contentsOf: repeatElement(0, count: lengthBytes - 8))
    for index in (0..<8).reversed() { padded.append(UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(index)))) }
    return padded
}
