internal import CLibPSL

/// The public suffix list, read through libpsl (the system's copy, newest of the built-in list
/// and Debian's `publicsuffix` package).
///
/// Cookie rules fail closed on it: when the list cannot be loaded, every question answers
/// "unknown", and callers reject a Domain attribute rather than risk a supercookie.
///
/// ```swift
/// let list = PublicSuffixList.system
/// list.isPublicSuffix("co.uk")                  // true
/// list.registrableDomain(of: "www.example.co.uk") // "example.co.uk"
/// ```
public final class PublicSuffixList: @unchecked Sendable {
    // @unchecked: `context` is written once in init; libpsl only reads it afterwards, and its
    // lookups are thread-safe on a shared context.
    private let context: OpaquePointer?
    private let ownsContext: Bool

    /// The system list, loaded once per process.
    public static let system = PublicSuffixList()

    /// Loads the newest list libpsl knows of.
    public init() {
        context = psl_latest(nil)
        ownsContext = true
    }

    /// Loads a list from a file (`.dat` text or `.dafsa`); an unreadable file gives a list that
    /// answers nothing, so that its users fail closed.
    public init(file path: String) {
        context = psl_load_file(path)
        ownsContext = true
    }

    /// A list that can answer nothing: what happens when libpsl has no data.
    public static func unavailable() -> PublicSuffixList {
        PublicSuffixList(file: "/nonexistent/public_suffix_list.dat")
    }

    deinit {
        if ownsContext, let context { psl_free(context) }
    }

    /// Whether the list could be loaded.
    public var isAvailable: Bool { context != nil }

    /// Whether `domain` (lower-case) is a public suffix such as `com`, `co.uk` or `github.io`;
    /// nil when the list is unavailable.
    public func isPublicSuffix(_ domain: String) -> Bool? {
        guard let context else { return nil }
        return psl_is_public_suffix(context, domain) != 0
    }

    /// Whether `domain` is a suffix the list names: `com` and `co.uk` are, `localhost` and
    /// `nas` (public suffixes only by the list's implicit `*` rule for unknown top-level
    /// names) are not; nil when the list is unavailable.
    public func isListedSuffix(_ domain: String) -> Bool? {
        guard let context else { return nil }
        return psl_is_public_suffix2(context, domain, Int32(PSL_TYPE_ANY | PSL_TYPE_NO_STAR_RULE)) != 0
    }

    /// The registrable domain (eTLD+1) of a lower-case host name; nil when the host is itself a
    /// public suffix, is an IP address, or the list is unavailable.
    public func registrableDomain(of host: String) -> String? {
        guard let context, !Host.isIPAddress(host) else { return nil }
        return host.withCString { cString in
            psl_registrable_domain(context, cString).map { String(cString: $0) }
        }
    }
}
