/// Exact conversion of a plain JSON decimal (`-?digits(.digits)?`, at most 19 significant
/// digits, no exponent) to the nearest `Double`, without going through text and libc.
///
/// Why: every cookie carries three times written as Swift's shortest round-trip form (most have
/// 17 significant digits, beyond the 2^53 of the classic fast path), and `Double(Substring)`
/// goes through text and libc for each: a large share of decoding a change. Here the digits become an
/// integer `m` and the value is `m / 10^k`, divided in 128-bit integers with a sticky bit for the
/// remainder and rounded to nearest-even at 53 bits: correctly rounded by construction, the same
/// result as `Double(String)`. Anything else (an exponent, more digits) answers nil and the
/// caller converts the text as before.
package enum DecimalDouble {
    /// The value of `bytes`, or nil when they are not of the handled form.
    package static func parse(_ bytes: UnsafeBufferPointer<UInt8>) -> Double? {
        let count = bytes.count
        var index = 0
        let negative = count > 0 && bytes[0] == UInt8(ascii: "-")
        if negative { index = 1 }
        var mantissa: UInt64 = 0
        // Significant digits so far: leading zeros are not counted, and 19 always fit in 64 bits.
        var digits = 0
        let integerStart = index
        while index < count {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { break }
            mantissa = mantissa &* 10 &+ UInt64(digit)
            if mantissa != 0 { digits += 1 }
            index += 1
        }
        guard index > integerStart else { return nil }
        var fractionDigits = 0
        if index < count {
            guard bytes[index] == UInt8(ascii: "."), index + 1 < count else { return nil }
            index += 1
            while index < count {
                let digit = bytes[index] &- UInt8(ascii: "0")
                guard digit < 10 else { return nil }
                mantissa = mantissa &* 10 &+ UInt64(digit)
                if mantissa != 0 { digits += 1 }
                fractionDigits += 1
                index += 1
            }
        }
        guard digits <= 19, fractionDigits <= 19 else { return nil }
        let magnitude = value(mantissa: mantissa, decimalExponent: fractionDigits)
        return negative ? -magnitude : magnitude
    }

    private static let powersOfTen: [UInt64] = {
        var powers: [UInt64] = [1]
        for _ in 1...19 { powers.append(powers[powers.count - 1] * 10) }
        return powers
    }()

    /// A 128-bit number by a 64-bit one in two hardware divisions, far cheaper than the
    /// generic 128-bit division (docs/performance.md, Engine and wire coding).
    private static func divide(_ dividend: UInt128, by divisor: UInt64) -> (quotient: UInt128, remainder: UInt64) {
        let (high, highRemainder) = UInt64(dividend >> 64).quotientAndRemainder(dividingBy: divisor)
        // highRemainder < divisor, so the second quotient fits in 64 bits.
        let (low, remainder) = divisor.dividingFullWidth(
            (high: highRemainder, low: UInt64(truncatingIfNeeded: dividend))
        )
        return (UInt128(high) << 64 | UInt128(low), remainder)
    }

    /// `mantissa / 10^decimalExponent`, correctly rounded (`decimalExponent` in 0...19).
    package static func value(mantissa: UInt64, decimalExponent: Int) -> Double {
        guard mantissa != 0 else { return 0 }
        let divisor = powersOfTen[decimalExponent]
        // Shift so that the quotient has 64 significant bits at least: 53 to keep, the rest to
        // round with. Both the shifted mantissa and the quotient fit in 128 bits.
        let mantissaBits = UInt64.bitWidth - mantissa.leadingZeroBitCount
        let divisorBits = UInt64.bitWidth - divisor.leadingZeroBitCount
        let shift = 64 + divisorBits - mantissaBits
        let (quotient, remainder) = divide(UInt128(mantissa) << shift, by: divisor)
        let quotientBits = UInt128.bitWidth - quotient.leadingZeroBitCount
        let dropped = quotientBits - 53
        var significand = quotient >> dropped
        let rest = quotient & ((1 << dropped) - 1)
        let half: UInt128 = 1 << (dropped - 1)
        if rest > half || (rest == half && (remainder != 0 || significand & 1 == 1)) { significand += 1 }
        // Rounding up may carry into a 54th bit (then the value is a power of two, exactly).
        let exponent = quotientBits - 1 - shift
        return Double(
            sign: .plus,
            exponent: exponent,
            significand: Double(UInt64(significand)) / Double(UInt64(1) << 52)
        )
    }
}
