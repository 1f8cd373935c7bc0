import Foundation

/// A cached response's `userInfo` in the cache's entry, whose user info is a map of strings (what
/// `keyjar cache list` and other readers show): string values as they are, and, when any value
/// is another property-list type (the URL Loading System guide's `willCacheResponse` stores a
/// date), the whole dictionary as a binary property list in base64 under one key of its own.
enum CachedUserInfo {
    static let propertyListKey = "keyjar.property-list"

    /// The entry's form of `userInfo`; values that are not property lists are left out.
    static func stored(_ userInfo: [AnyHashable: Any]?) -> [String: String] {
        var strings: [String: String] = [:]
        var others: [String: Any] = [:]
        for (key, value) in userInfo ?? [:] {
            guard let key = key as? String, key != propertyListKey else { continue }
            if let text = value as? String {
                strings[key] = text
            } else if PropertyListSerialization.propertyList(value, isValidFor: .binary) {
                others[key] = value
            }
        }
        guard !others.isEmpty else { return strings }
        let all = strings.reduce(into: others) { $0[$1.key] = $1.value }
        if let list = try? PropertyListSerialization.data(fromPropertyList: all, format: .binary, options: 0) {
            strings[propertyListKey] = list.base64EncodedString()
        }
        return strings
    }

    /// `userInfo` as it was stored; nil when there was none.
    static func read(_ stored: [String: String]) -> [AnyHashable: Any]? {
        guard !stored.isEmpty else { return nil }
        if let encoded = stored[propertyListKey], let list = Data(base64Encoded: encoded),
            let all = try? PropertyListSerialization.propertyList(from: list, options: [], format: nil)
                as? [String: Any]
        {
            return all
        }
        return stored
    }
}
