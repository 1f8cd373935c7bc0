/// The cookie file formats Keyjar imports and exports: `cookies.txt` (``NetscapeCookieFile``)
/// and its own JSON array (``CookieJSONFile``).
public enum CookieFileFormat: String, Sendable, Hashable, Codable, CaseIterable {
    case netscape, json
}
