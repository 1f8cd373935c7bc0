/// `%XX` escapes (RFC 3986 §2.1) decoded by one rule for every format that has them: a data:
/// URL's payload, git's `state[]` values, a user after `#` in `keyjar run --env`, a pass
/// entry's file name.
package enum PercentEncoding {
    /// Each `%XX` as its byte. A `%` not followed by two hex digits makes the whole text nil
    /// when `strict`; otherwise it stays as it is (what browsers do with a data: URL).
    package static func decoded(_ text: some Collection<UInt8>, strict: Bool) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(text.count)
        var rest = text[...]
        while let byte = rest.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                output.append(byte)
                continue
            }
            var digits = rest.prefix(2).makeIterator()
            if let high = digits.next().flatMap({ Hex.value(of: $0) }),
                let low = digits.next().flatMap({ Hex.value(of: $0) })
            {
                output.append(high << 4 | low)
                rest = rest.dropFirst(2)
            } else if strict {
                return nil
            } else {
                output.append(byte)
            }
        }
        return output
    }
}
