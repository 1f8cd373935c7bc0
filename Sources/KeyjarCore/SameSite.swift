/// The SameSite enforcement mode of a cookie (RFC 6265bis §4.1.2.7, §5.6.7).
///
/// `unspecified` is kept apart from `lax` so that exports and the UI can show what the server
/// actually sent; for enforcement it behaves exactly like `lax` ("Lax by default").
public enum SameSite: String, Sendable, Hashable, Codable, CaseIterable {
    case strict = "Strict"
    case lax = "Lax"
    case none = "None"
    case unspecified = "Unspecified"

    /// The mode used when deciding whether a cookie goes with a cross-site request.
    public var enforced: SameSite { self == .unspecified ? .lax : self }

    /// Parses an attribute value case-insensitively; anything unknown is `unspecified`
    /// (RFC 6265bis §5.6.7: an unrecognised value means "Default").
    public init(attributeValue: some StringProtocol) {
        switch attributeValue.lowercased() {
        case "strict": self = .strict
        case "lax": self = .lax
        case "none": self = .none
        default: self = .unspecified
        }
    }
}
