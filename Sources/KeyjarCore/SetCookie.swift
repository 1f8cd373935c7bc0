public import FoundationEssentials

/// A Set-Cookie header as the parser read it, before the storage model (RFC 6265bis §5.7)
/// decides whether and how to store it. Only the last occurrence of each attribute counts.
public struct SetCookie: Sendable, Hashable {
    public var name: String
    public var value: String
    /// The Expires attribute, when present and a valid cookie date.
    public var expires: Date?
    /// The Max-Age attribute in seconds, when present and well formed; it wins over `expires`.
    public var maxAge: Int64?
    /// The Domain attribute without a leading dot and lower-cased; nil when absent or empty.
    public var domain: String?
    /// The Path attribute; nil when absent or not starting with "/" (the default path applies).
    public var path: String?
    public var secure: Bool
    public var httpOnly: Bool
    public var sameSite: SameSite
    /// The `Partitioned` attribute (CHIPS): the cookie is kept under the top-level site of the
    /// request that sets it.
    public var partitioned: Bool

    public init(
        name: String,
        value: String,
        expires: Date? = nil,
        maxAge: Int64? = nil,
        domain: String? = nil,
        path: String? = nil,
        secure: Bool = false,
        httpOnly: Bool = false,
        sameSite: SameSite = .unspecified,
        partitioned: Bool = false
    ) {
        self.name = name
        self.value = value
        self.expires = expires
        self.maxAge = maxAge
        self.domain = domain
        self.path = path
        self.secure = secure
        self.httpOnly = httpOnly
        self.sameSite = sameSite
        self.partitioned = partitioned
    }
}
