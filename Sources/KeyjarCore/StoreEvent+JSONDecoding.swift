import Foundation

// Fast decoding of the cookie model from parsed JSON, mirroring its `Codable` shape exactly.
// Each answers nil for anything unexpected (an unknown key included), and the caller falls back
// to Foundation's decoder: slower, but it agrees on every valid input and words the errors.

extension Cookie {
    private static let jsonKeys: Set<String> = [
        "name", "value", "domain", "hostOnly", "path", "expires", "secure", "httpOnly", "sameSite", "creation",
        "lastAccess",
    ]

    package init?(json: JSONValue) {
        guard case .object(let members) = json, members.allSatisfy({ Self.jsonKeys.contains($0.key) }),
            let name = json["name"]?.string, let value = json["value"]?.string, let domain = json["domain"]?.string,
            let hostOnly = json["hostOnly"]?.bool, let path = json["path"]?.string, let secure = json["secure"]?.bool,
            let httpOnly = json["httpOnly"]?.bool, let sameSiteName = json["sameSite"]?.string,
            let sameSite = SameSite(rawValue: sameSiteName), let creation = json["creation"]?.double,
            let lastAccess = json["lastAccess"]?.double
        else { return nil }
        var expires: Date?
        switch json["expires"] {
        case nil, .null?: expires = nil
        case let time?:
            guard let seconds = time.double else { return nil }
            expires = Date(timeIntervalSince1970: seconds)
        }
        self.init(
            name: name, value: value, domain: domain, hostOnly: hostOnly, path: path, expires: expires, secure: secure,
            httpOnly: httpOnly, sameSite: sameSite, creation: Date(timeIntervalSince1970: creation),
            lastAccess: Date(timeIntervalSince1970: lastAccess))
    }
}

extension Cookie {
    /// An array of cookies; nil when it is not an array or any element is not a cookie.
    package static func array(json: JSONValue) -> [Cookie]? {
        guard let elements = json.array else { return nil }
        var cookies: [Cookie] = []
        cookies.reserveCapacity(elements.count)
        for element in elements {
            guard let cookie = Cookie(json: element) else { return nil }
            cookies.append(cookie)
        }
        return cookies
    }
}

extension CookieChange {
    package init?(json: JSONValue) {
        guard let keys = json.keys, let kind = json["kind"]?.string, let cookieJSON = json["cookie"],
            let cookie = Cookie(json: cookieJSON)
        else { return nil }
        switch kind {
        case "added" where keys.count == 2:
            self = .added(cookie)
        case "replaced" where keys.count == 3:
            guard let oldJSON = json["old"], let old = Cookie(json: oldJSON) else { return nil }
            self = .replaced(old: old, new: cookie)
        case "removed" where keys.count == 3:
            guard let causeName = json["cause"]?.string, let cause = CookieRemovalCause(rawValue: causeName) else { return nil }
            self = .removed(cookie, cause: cause)
        default:
            return nil
        }
    }
}

extension StoreEvent {
    /// Cookie events only (the frequent, large ones); policy and credential events are small
    /// and rare, and go through `Codable`.
    package init?(json: JSONValue) {
        guard let (kind, body) = json.singleMember, kind == "cookies", body.keys == ["changes"],
            let changesJSON = body["changes"]?.array
        else { return nil }
        var changes: [CookieChange] = []
        changes.reserveCapacity(changesJSON.count)
        for changeJSON in changesJSON {
            guard let change = CookieChange(json: changeJSON) else { return nil }
            changes.append(change)
        }
        self = .cookies(changes: changes)
    }
}
