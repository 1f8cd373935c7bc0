/// Host-name rules of RFC 6265bis §5.1.3 (domain matching) and the IP-address checks that must
/// run before the public suffix list is asked.
public enum Host {
    /// True for IPv4 and IPv6 literals. A host whose last label is numeric is an IPv4 address
    /// for a URL parser (WHATWG "ends in a number"), so it is treated as one here too.
    public static func isIPAddress(_ host: String) -> Bool {
        // One pass over the bytes: every Cookie header lookup asks, and the generic `UTF8View`
        // searches (`contains`, `lastIndex`, slices) were 4% of `keyjar-bench engine` (perf).
        Bytes.with(host) { bytes in
            var lastLabelStart = 0
            for (offset, byte) in bytes.enumerated() {
                if byte == UInt8(ascii: ":") { return true }
                if byte == UInt8(ascii: ".") { lastLabelStart = offset + 1 }
            }
            let lastLabel = UnsafeBufferPointer(rebasing: bytes[lastLabelStart...])
            guard !lastLabel.isEmpty else { return false }
            if lastLabel.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) { return true }
            guard lastLabel.count >= 2, lastLabel[0] == UInt8(ascii: "0"), lastLabel[1] | 0x20 == UInt8(ascii: "x")
            else { return false }
            return lastLabel.dropFirst(2).allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte | 0x20 >= 0x61 && byte | 0x20 <= 0x66)
            }
        }
    }

    /// A domain as users type it (`.Example.COM`) in canonical form (`example.com`).
    public static func canonicalDomain(_ domain: String) -> String {
        CookieURL.canonicalHost(domain.hasPrefix(".") ? String(domain.dropFirst()) : domain)
    }

    /// Whether `host`, as any URL or user gives it (brackets, capitals, a final dot), names this
    /// machine: the one rule for "http here does not leave the machine" (a token endpoint, a
    /// wildcard credential over cleartext). `isLoopback` of the canonical form, plus an
    /// IPv4-mapped loopback (`::ffff:127.0.0.1`). A DNS name is never this machine because of
    /// how it starts (`127.attacker.example`). A final dot is dropped, as a protection space
    /// drops it (`localhost.` is `localhost` there too).
    public static func isThisMachine(_ host: String) -> Bool {
        var canonical = CookieURL.canonicalHost(host)
        if canonical.count > 1, canonical.hasSuffix(".") { canonical.removeLast() }
        if isLoopback(canonical) { return true }
        let mapped = "::ffff:"
        return canonical.hasPrefix(mapped) && isLoopback(String(canonical.dropFirst(mapped.count)))
    }

    /// Loopback hosts: `localhost` and its subdomains (RFC 6761 §6.3: they resolve to loopback,
    /// and libcurl resolves them so itself), 127.0.0.0/8 as four decimal octets, and ::1.
    /// `host` must be canonical (lower case, no brackets): `isThisMachine` takes any form.
    public static func isLoopback(_ host: String) -> Bool {
        // Compared as bytes, in one pass: every Cookie header lookup asks (a request to this
        // machine counts as a secure channel), and String's prefix and suffix tests went through
        // grapheme boundaries (0.6% of a loader request's samples, perf).
        Bytes.with(host) { bytes in
            if bytes.elementsEqual("localhost".utf8) || bytes.elementsEqual("::1".utf8)
                || bytes.elementsEqual("0:0:0:0:0:0:0:1".utf8)
                || (bytes.count >= 10 && bytes[(bytes.count - 10)...].elementsEqual(".localhost".utf8))
            {
                return true
            }
            guard bytes.starts(with: "127.".utf8) else { return false }
            // Four decimal octets.
            var octets = 0
            var value = 0
            var digits = 0
            for byte in bytes {
                if byte == UInt8(ascii: ".") {
                    guard digits > 0 else { return false }
                    octets += 1
                    value = 0
                    digits = 0
                } else {
                    guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return false }
                    value = value * 10 + Int(byte - UInt8(ascii: "0"))
                    digits += 1
                    guard value <= 255, digits <= 3 else { return false }
                }
            }
            return digits > 0 && octets == 3
        }
    }

    /// RFC 6265bis §5.1.3: `host` domain-matches `domain` when they are identical, or when
    /// `domain` is a suffix of `host` preceded by a dot and `host` is a host name, not an IP.
    /// Both must already be canonical (lower-case).
    public static func domainMatches(_ host: String, _ domain: String) -> Bool {
        host == domain || (isSuffixDomain(host, of: domain) && !isIPAddress(host))
    }

    /// Whether `host` is `domain` or, when `suffixAllowed`, a name under it (`a.b.c` of `b.c`),
    /// compared as bytes (lengths first: `String ==` goes through the runtime's general
    /// comparison for every unequal pair).
    @inline(__always)
    static func isSameOrSubdomain(_ host: String, of domain: String, suffixAllowed: Bool) -> Bool {
        let hostCount = host.utf8.count
        let domainCount = domain.utf8.count
        if hostCount == domainCount {
            return Bytes.with(host) { hostBytes in Bytes.with(domain) { Bytes.equal(hostBytes, at: 0, $0) } }
        }
        return suffixAllowed && isSuffixDomain(host, of: domain)
    }

    /// Whether `domain` is a proper dot-separated suffix of `host` (`b.c` of `a.b.c`).
    @inline(__always)
    static func isSuffixDomain(_ host: String, of domain: String) -> Bool {
        let hostCount = host.utf8.count
        let domainCount = domain.utf8.count
        guard hostCount > domainCount, domainCount > 0 else { return false }
        return Bytes.with(host) { hostBytes in
            Bytes.with(domain) { domainBytes in
                hostBytes[hostCount - domainCount - 1] == UInt8(ascii: ".")
                    && Bytes.equal(hostBytes, at: hostCount - domainCount, domainBytes)
            }
        }
    }

    /// Every dot-separated suffix of a host name, longest first: `a.b.c` → `a.b.c`, `b.c`, `c`.
    static func suffixes(of host: String) -> [Substring] {
        var result: [Substring] = [Substring(host)]
        var rest = Substring(host)
        while let dot = rest.firstIndex(of: ".") {
            rest = rest[rest.index(after: dot)...]
            if !rest.isEmpty { result.append(rest) }
        }
        return result
    }
}
