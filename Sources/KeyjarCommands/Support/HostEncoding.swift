import FoundationEssentials

/// Whether this process can put a host in the form Keyjar stores and matches it: IDNA A-labels
/// (`bücher.example` is `xn--bcher-kva.example`). Foundation's URL parser applies IDNA through
/// ICU; a process that links only FoundationEssentials — the `keyjar` front — leaves a Unicode
/// host as written (percent-encoded by `host(percentEncoded: true)`). So the front hands a
/// command about such a host to keyjar-full (``FullCommand``), which answers it as before,
/// rather than answer it wrongly. keyjar-full itself never hands over.
package enum HostEncoding {
    /// Whether URLs parsed in this process have their hosts IDNA-encoded.
    package static let appliesIDNA = URL(string: "http://b\u{FC}cher.example/")?.host == "xn--bcher-kva.example"

    /// Whether `host` (as written, or percent-encoded) needs IDNA that this process cannot
    /// apply: a byte outside ASCII, or a percent sign.
    package static func needsFullCommand(host: String?) -> Bool {
        guard let host, host.utf8.contains(where: { $0 >= 0x80 || $0 == UInt8(ascii: "%") }) else { return false }
        return !appliesIDNA
    }
}
