import FoundationEssentials
package import KeyjarCore

// The JSON of a cookie, its identity and a change to a jar, shared by the wire protocol
// (Schemas/protocol.md) and keyjard's change log (Schemas/change-log.md): times as Unix
// seconds, an absent `expires` for a session cookie, an absent `partitionKey` for an
// unpartitioned one (a partitioned cookie's is `scheme://site`, as browsers store it).
//
// Each value has one writer and one reader of the tree. The layout readers at the end read the
// writer's exact bytes without building a tree (every subscriber decodes every change); they
// answer nil for anything else, and the caller then uses the tree reader.

// MARK: Writing

extension JSONWriter {
    package mutating func write(_ cookie: Cookie) {
        raw(#"{"name":"#)
        write(string: cookie.name)
        raw(#","value":"#)
        write(string: cookie.value)
        raw(#","domain":"#)
        write(string: cookie.domain)
        if cookie.hostOnly { raw(#","hostOnly":true,"path":"#) } else { raw(#","hostOnly":false,"path":"#) }
        write(string: cookie.path)
        if let expires = cookie.expires {
            raw(#","expires":"#)
            write(number: expires.timeIntervalSince1970)
        }
        if cookie.secure { raw(#","secure":true"#) } else { raw(#","secure":false"#) }
        if cookie.httpOnly { raw(#","httpOnly":true,"sameSite":""#) } else { raw(#","httpOnly":false,"sameSite":""#) }
        bytes.append(contentsOf: cookie.sameSite.rawValue.utf8)
        raw(#"","creation":"#)
        write(number: cookie.creation.timeIntervalSince1970)
        raw(#","lastAccess":"#)
        write(number: cookie.lastAccess.timeIntervalSince1970)
        if let partitionKey = cookie.partitionKey {
            raw(#","partitionKey":"#)
            write(string: partitionKey.serialized)
        }
        raw("}")
    }

    /// Cookies as a JSON array: requests, replies and snapshots carry up to 100,000 of them.
    package mutating func write(cookies: [Cookie]) {
        raw("[")
        for (index, cookie) in cookies.enumerated() {
            if index > 0 { raw(",") }
            write(cookie)
        }
        raw("]")
    }

    /// Cookies as the JSON cookie file has them (``CookieJSONFile``): indented, members sorted
    /// by name, whole numbers without a fraction — the layout of Foundation's pretty-printing
    /// encoder, which wrote the files first.
    package mutating func write(fileCookies cookies: [Cookie]) {
        guard !cookies.isEmpty else { return raw("[\n\n]") }
        raw("[\n")
        for (index, cookie) in cookies.enumerated() {
            raw(index == 0 ? "  {\n    \"creation\" : " : ",\n  {\n    \"creation\" : ")
            write(fileNumber: cookie.creation.timeIntervalSince1970)
            raw(",\n    \"domain\" : ")
            write(string: cookie.domain)
            if let expires = cookie.expires {
                raw(",\n    \"expires\" : ")
                write(fileNumber: expires.timeIntervalSince1970)
            }
            raw(",\n    \"hostOnly\" : ")
            write(bool: cookie.hostOnly)
            raw(",\n    \"httpOnly\" : ")
            write(bool: cookie.httpOnly)
            raw(",\n    \"lastAccess\" : ")
            write(fileNumber: cookie.lastAccess.timeIntervalSince1970)
            raw(",\n    \"name\" : ")
            write(string: cookie.name)
            if let partitionKey = cookie.partitionKey {
                raw(",\n    \"partitionKey\" : ")
                write(string: partitionKey.serialized)
            }
            raw(",\n    \"path\" : ")
            write(string: cookie.path)
            raw(",\n    \"sameSite\" : ")
            write(string: cookie.sameSite.rawValue)
            raw(",\n    \"secure\" : ")
            write(bool: cookie.secure)
            raw(",\n    \"value\" : ")
            write(string: cookie.value)
            raw("\n  }")
        }
        raw("\n]")
    }

    /// `1735689600` rather than `1735689600.0`.
    private mutating func write(fileNumber number: Double) {
        var text = number.isFinite ? "\(number)" : "0"
        if text.hasSuffix(".0") { text.removeLast(2) }
        bytes.append(contentsOf: text.utf8)
    }

    package mutating func write(_ identity: Cookie.Identity) {
        raw(#"{"name":"#)
        write(string: identity.name)
        raw(#","domain":"#)
        write(string: identity.domain)
        raw(#","hostOnly":"#)
        write(bool: identity.hostOnly)
        raw(#","path":"#)
        write(string: identity.path)
        if let partitionKey = identity.partitionKey {
            raw(#","partitionKey":"#)
            write(string: partitionKey.serialized)
        }
        raw("}")
    }

    package mutating func write(_ change: CookieChange) {
        switch change {
        case .added(let cookie):
            raw(#"{"kind":"added","cookie":"#)
            write(cookie)
        case .replaced(let old, let new):
            raw(#"{"kind":"replaced","cookie":"#)
            write(new)
            raw(#","old":"#)
            write(old)
        case .removed(let cookie, let cause):
            raw(#"{"kind":"removed","cookie":"#)
            write(cookie)
            raw(#","cause":""#)
            bytes.append(contentsOf: cause.rawValue.utf8)
            raw("\"")
        }
        raw("}")
    }
}

// MARK: Reading

/// A cookie object's members, read in one pass and each key matched once (looking each field up
/// by name took a quarter of a notified client's decoding); absent ones are nil. The parser
/// refuses duplicate keys, so the order of members does not matter. The protocol requires
/// every member but `expires`; the JSON cookie file (``CookieJSONFile``) only the first three.
struct CookieMembers {
    var name: String?
    var value: String?
    var domain: String?
    var hostOnly: Bool?
    var path: String?
    var expires: Double?
    var secure: Bool?
    var httpOnly: Bool?
    var sameSite: SameSite?
    var creation: Double?
    var lastAccess: Double?
    var partitionKey: CookiePartitionKey?

    /// `nullIsAbsent`: a member the file may leave out may also be null. `expires` may be null
    /// everywhere (a session cookie).
    init(json: JSONValue, nullIsAbsent: Bool) throws(JSONShapeError) {
        for (key, member) in try json.members() {
            if member.isNull, key == "expires" || (nullIsAbsent && key != "name" && key != "value" && key != "domain") {
                continue
            }
            do {
                switch key {
                case "name": name = try member.decodeString()
                case "value": value = try member.decodeString()
                case "domain": domain = try member.decodeString()
                case "hostOnly": hostOnly = try member.decodeBool()
                case "path": path = try member.decodeString()
                case "expires": expires = try member.decodeDouble()
                case "secure": secure = try member.decodeBool()
                case "httpOnly": httpOnly = try member.decodeBool()
                case "sameSite": sameSite = try member.decodeRawValue(SameSite.self)
                case "creation": creation = try member.decodeDouble()
                case "lastAccess": lastAccess = try member.decodeDouble()
                case "partitionKey": partitionKey = try member.decodePartitionKey()
                default: continue
                }
            } catch {
                throw error.under(key)
            }
        }
    }
}

extension JSONValue {
    /// A partition key in its `scheme://site` form; anything else is an invalid value, never an
    /// unpartitioned cookie (that would send it to every site).
    func decodePartitionKey() throws(JSONShapeError) -> CookiePartitionKey {
        guard let key = CookiePartitionKey(serialized: try decodeString()) else { throw .invalidValue }
        return key
    }
}

extension Cookie {
    package init(json: JSONValue) throws(JSONShapeError) {
        let members = try CookieMembers(json: json, nullIsAbsent: false)
        guard let name = members.name else { throw JSONShapeError(.missing("name")) }
        guard let value = members.value else { throw JSONShapeError(.missing("value")) }
        guard let domain = members.domain else { throw JSONShapeError(.missing("domain")) }
        guard let hostOnly = members.hostOnly else { throw JSONShapeError(.missing("hostOnly")) }
        guard let path = members.path else { throw JSONShapeError(.missing("path")) }
        guard let secure = members.secure else { throw JSONShapeError(.missing("secure")) }
        guard let httpOnly = members.httpOnly else { throw JSONShapeError(.missing("httpOnly")) }
        guard let sameSite = members.sameSite else { throw JSONShapeError(.missing("sameSite")) }
        guard let creation = members.creation else { throw JSONShapeError(.missing("creation")) }
        guard let lastAccess = members.lastAccess else { throw JSONShapeError(.missing("lastAccess")) }
        self.init(
            name: name,
            value: value,
            domain: domain,
            hostOnly: hostOnly,
            path: path,
            expires: members.expires.map(Date.init(timeIntervalSince1970:)),
            secure: secure,
            httpOnly: httpOnly,
            sameSite: sameSite,
            creation: Date(timeIntervalSince1970: creation),
            lastAccess: Date(timeIntervalSince1970: lastAccess),
            partitionKey: members.partitionKey
        )
    }

    package static func array(json: JSONValue) throws(JSONShapeError) -> [Cookie] {
        try json.elements(Cookie.init(json:))
    }
}

extension Cookie.Identity {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(
            name: try json.string("name"),
            domain: try json.string("domain"),
            hostOnly: try json.bool("hostOnly"),
            path: try json.string("path"),
            partitionKey: try json.optional("partitionKey") { value throws(JSONShapeError) in
                try value.decodePartitionKey()
            }
        )
    }
}

extension CookieChange {
    package init(json: JSONValue) throws(JSONShapeError) {
        let cookie = try json.required("cookie", Cookie.init(json:))
        switch try json.string("kind") {
        case "added":
            self = .added(cookie)
        case "replaced":
            self = .replaced(old: try json.required("old", Cookie.init(json:)), new: cookie)
        case "removed":
            self = .removed(cookie, cause: try json.rawValue("cause", as: CookieRemovalCause.self))
        default:
            throw JSONShapeError.invalidValue.under("kind")
        }
    }
}

// MARK: Reading the layout keyjard writes

// The same values as above, read straight from the bytes in the exact layout of the writer
// (members in its order, no whitespace); nil for anything else.

extension JSONReader {
    /// A SameSite value as keyjard writes it, matched as bytes (the raw-value initializer's
    /// string switch is dearer than the rest of the cookie's fields: docs/performance.md,
    /// Engine and wire coding); nil for anything else.
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
            reader.skip(#","lastAccess":"#), let lastAccess = reader.readDouble()
        else { return nil }
        var partitionKey: CookiePartitionKey?
        if reader.skip(#","partitionKey":"#) {
            guard let key = reader.readString().flatMap(CookiePartitionKey.init(serialized:)) else { return nil }
            partitionKey = key
        }
        guard reader.skip("}") else { return nil }
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
            lastAccess: Date(timeIntervalSince1970: lastAccess),
            partitionKey: partitionKey
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
