import FoundationEssentials

extension Host {
    /// A domain as a person gives it — `Bücher.Example.`, `.example.com`, or a whole URL — in
    /// the form cookies and rules are stored in: IDNA (punycode) A-labels, lower case, no
    /// leading or trailing dot. Nil for text that names no domain a cookie could have (a
    /// wildcard, a space, an empty label), so that a rule or filter that could never match is
    /// refused rather than stored. Every command that takes a domain goes through this.
    public static func normalisedDomain(_ text: String) -> String? {
        var text = text.trimmingWhitespace()
        if text.contains("://") {
            guard let host = URL(string: text)?.host, !host.isEmpty else { return nil }
            text = host
        }
        if text.hasPrefix(".") { text.removeFirst() }
        if text.hasSuffix(".") { text.removeLast() }
        guard !text.isEmpty, !text.contains("*") else { return nil }
        if text.hasPrefix("["), text.hasSuffix("]") { text = String(text.dropFirst().dropLast()) }
        if text.contains(":") {
            // An IPv6 literal: kept as written, lower-cased.
            return text.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) ? text.lowercased() : nil
        }
        // `bücher` → `xn--bcher-kva`, as every Keyjar process names a host.
        guard let ascii = Host.asciiName(text), let host = URL(string: "http://\(ascii)/")?.host, !host.isEmpty else {
            return nil
        }
        let domain = host.lowercased()
        let labels = domain.split(separator: ".", omittingEmptySubsequences: false)
        let allowed = { (byte: UInt8) in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
        }
        guard labels.allSatisfy({ !$0.isEmpty && $0.utf8.count <= 63 && $0.utf8.allSatisfy(allowed) }) else {
            return nil
        }
        return domain
    }
}
