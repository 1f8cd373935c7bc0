import CLibIDN2
import KeyjarPlatform

extension Host {
    /// A host name by its IDNA A-labels (`Bücher.example` → `xn--bcher-kva.example`): the one
    /// rule every Keyjar process names a Unicode host by, so that a cookie set through the
    /// loader is the one `keyjar cookie get` finds and a credential added for a URL is the one
    /// git's request names. ASCII is returned as it is (callers lower-case it).
    ///
    /// libidn2, as libcurl applies it to the host it resolves: UTS #46 non-transitional
    /// processing of the NFC form, and transitional processing when that refuses the name
    /// (curl's fallback, for IDNA2003 names). Foundation's URL parser gives the same A-labels
    /// through ICU (`Host+IDNATests` holds the two together), but the `keyjar` front links no
    /// ICU. Nil for a name IDNA refuses (a disallowed code point, a label too long), for a NUL
    /// (which would end the name early for libidn2), and for a Unicode name whose A-labels are
    /// not a host name: UTS #46 maps some characters to ASCII delimiters (a fullwidth `／` to
    /// `/`), which would make `evil.example／.bank.example` a name under `bank.example`.
    public static func asciiName(_ name: String) -> String? {
        guard !name.utf8.contains(0) else { return nil }
        guard name.utf8.contains(where: { $0 >= 0x80 }) else { return name }
        var output: UnsafeMutablePointer<UInt8>?
        var status = idn2_lookup_u8(
            name,
            &output,
            Int32(IDN2_NFC_INPUT.rawValue | IDN2_NONTRANSITIONAL.rawValue)
        )
        if status != Int32(IDN2_OK.rawValue) {
            status = idn2_lookup_u8(name, &output, Int32(IDN2_NFC_INPUT.rawValue | IDN2_TRANSITIONAL.rawValue))
        }
        guard status == Int32(IDN2_OK.rawValue), let output else { return nil }
        defer { idn2_free(output) }
        let ascii = String(cString: output)
        return ascii.utf8.allSatisfy(isHostNameByte) ? ascii : nil
    }

    /// A byte of a host name's A-labels: a letter, a digit, `-`, `_` or a dot.
    private static func isHostNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."):
            true
        default: false
        }
    }

    /// ``asciiName(_:)`` of a URL's host as `host(percentEncoded: true)` gives it (a Unicode
    /// host comes percent-encoded as UTF-8); nil when the escapes are not UTF-8, or decode to
    /// anything but a host name's characters: `evil.example%2F.bank.example` names no host
    /// under `bank.example` (nor do `%40`, `%3A` or `%00`).
    public static func asciiName(percentEncoded host: String) -> String? {
        guard host.utf8.contains(UInt8(ascii: "%")) else { return asciiName(host) }
        guard let bytes = PercentEncoding.decoded(host.utf8, strict: true),
            bytes.allSatisfy({ $0 >= 0x80 || isHostNameByte($0) }),
            let name = String(validating: bytes, as: UTF8.self)
        else { return nil }
        return asciiName(name)
    }
}
