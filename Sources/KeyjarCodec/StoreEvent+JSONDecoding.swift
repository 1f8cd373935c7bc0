import Foundation
package import KeyjarCore

// Fast decoding of the cookie model from parsed JSON, mirroring its `Codable` shape exactly.
// Each answers nil for anything unexpected (an unknown key included), and the caller falls back
// to Foundation's decoder: slower, but it agrees on every valid input and words the errors.

extension Cookie {
    /// One pass over the members, each key matched once: looking each field up by name (and
    /// checking every key against a set first) took a quarter of a notified client's decoding.
    /// The reader refuses duplicate keys, so the order of members does not matter.
    package init?(json: JSONValue) {
        guard case .object(let members) = json, members.count >= 10, members.count <= 11 else { return nil }
        var name: String?
        var value: String?
        var domain: String?
        var path: String?
        var sameSite: SameSite?
        var hostOnly: Bool?
        var secure: Bool?
        var httpOnly: Bool?
        var creation: Double?
        var lastAccess: Double?
        var expires: Date?
        for (key, member) in members {
            switch key {
            case "name": name = member.string
            case "value": value = member.string
            case "domain": domain = member.string
            case "path": path = member.string
            case "hostOnly": hostOnly = member.bool
            case "secure": secure = member.bool
            case "httpOnly": httpOnly = member.bool
            case "sameSite": sameSite = member.string.flatMap(SameSite.init(rawValue:))
            case "creation": creation = member.double
            case "lastAccess": lastAccess = member.double
            case "expires":
                if case .null = member { continue }
                guard let seconds = member.double else { return nil }
                expires = Date(timeIntervalSince1970: seconds)
            default: return nil
            }
        }
        guard let name, let value, let domain, let hostOnly, let path, let secure, let httpOnly, let sameSite,
            let creation, let lastAccess
        else { return nil }
        self.init(
            name: name,
            value: value,
            domain: domain,
            hostOnly: hostOnly,
            path: path,
            expires: expires,
            secure: secure,
            httpOnly: httpOnly,
            sameSite: sameSite,
            creation: Date(timeIntervalSince1970: creation),
            lastAccess: Date(timeIntervalSince1970: lastAccess)
        )
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
            guard let causeName = json["cause"]?.string, let cause = CookieRemovalCause(rawValue: causeName) else {
                return nil
            }
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

// MARK: - Reading the layout keyjard writes

// The same values as above, read straight from the bytes in the exact layout of `JSONWriter`
// (members in its order, no whitespace); nil for anything else, and the caller parses the tree.

extension JSONReader {
    /// A SameSite value as keyjard writes it, matched as bytes (the raw-value initializer's
    /// string switch costs more than the rest of the cookie's fields); nil for anything else.
    mutating func readSameSite() -> SameSite? {
        if skip(#""Lax""#) { return .lax }
        if skip(#""Unspecified""#) { return .unspecified }
        if skip(#""Strict""#) { return .strict }
        if skip(#""None""#) { return SameSite.none }
        return nil
    }
}

extension Cookie {
    package init?(canonical reader: inout JSONReader) {
        guard reader.skip(#"{"name":"#), let name = reader.readString(),
            reader.skip(#","value":"#), let value = reader.readString(),
            reader.skip(#","domain":"#), let domain = reader.readString(),
            reader.skip(#","hostOnly":"#), let hostOnly = reader.readBool(),
            reader.skip(#","path":"#), let path = reader.readString()
        else { return nil }
        var expires: Date?
        if reader.skip(#","expires":"#) {
            guard let seconds = reader.readDouble() else { return nil }
            expires = Date(timeIntervalSince1970: seconds)
        }
        guard reader.skip(#","secure":"#), let secure = reader.readBool(),
            reader.skip(#","httpOnly":"#), let httpOnly = reader.readBool(),
            reader.skip(#","sameSite":"#), let sameSite = reader.readSameSite(),
            reader.skip(#","creation":"#), let creation = reader.readDouble(),
            reader.skip(#","lastAccess":"#), let lastAccess = reader.readDouble(),
            reader.skip("}")
        else { return nil }
        self.init(
            name: name,
            value: value,
            domain: domain,
            hostOnly: hostOnly,
            path: path,
            expires: expires,
            secure: secure,
            httpOnly: httpOnly,
            sameSite: sameSite,
            creation: Date(timeIntervalSince1970: creation),
            lastAccess: Date(timeIntervalSince1970: lastAccess)
        )
    }
}

extension CookieChange {
    package init?(canonical reader: inout JSONReader) {
        if reader.skip(#"{"kind":"added","cookie":"#) {
            guard let cookie = Cookie(canonical: &reader), reader.skip("}") else { return nil }
            self = .added(cookie)
        } else if reader.skip(#"{"kind":"replaced","cookie":"#) {
            guard let cookie = Cookie(canonical: &reader), reader.skip(#","old":"#),
                let old = Cookie(canonical: &reader),
                reader.skip("}")
            else { return nil }
            self = .replaced(old: old, new: cookie)
        } else if reader.skip(#"{"kind":"removed","cookie":"#) {
            guard let cookie = Cookie(canonical: &reader), reader.skip(#","cause":"#),
                let cause = reader.readString().flatMap(CookieRemovalCause.init(rawValue:)), reader.skip("}")
            else { return nil }
            self = .removed(cookie, cause: cause)
        } else {
            return nil
        }
    }
}

extension StoreEvent {
    /// A cookie event (`{"cookies":{"changes":[…]}}`); other events answer nil.
    package init?(canonical reader: inout JSONReader) {
        guard reader.skip(#"{"cookies":{"changes":["#) else { return nil }
        var changes: [CookieChange] = []
        if !reader.skip("]") {
            repeat {
                guard let change = CookieChange(canonical: &reader) else { return nil }
                changes.append(change)
            } while reader.skip(",")
            guard reader.skip("]") else { return nil }
        }
        guard reader.skip("}}") else { return nil }
        self = .cookies(changes: changes)
    }
}
