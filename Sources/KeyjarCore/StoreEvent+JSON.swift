import Foundation

extension StoreEvent {
    /// The event as JSON, in exactly the shape its `Codable` conformance reads (times as Unix
    /// seconds). Cookie events are written by hand: an import of 100,000 cookies is one event,
    /// and Foundation's encoder would spend seconds on it. Others are rare and small.
    public func encodedJSON() -> String {
        guard case .cookies(let changes) = self else {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .secondsSince1970
            return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
        var writer = JSONWriter()
        writer.output.reserveCapacity(64 + changes.count * 220)
        writer.output += #"{"cookies":{"changes":["#
        for (index, change) in changes.enumerated() {
            if index > 0 { writer.output += "," }
            writer.write(change)
        }
        writer.output += "]}}"
        return writer.output
    }
}

extension Cookie {
    /// Cookies as a JSON array in their `Codable` shape (times as Unix seconds), written fast
    /// enough for snapshots of 100,000 cookies.
    public static func encodedJSONArray(_ cookies: [Cookie]) -> String {
        var writer = JSONWriter()
        writer.output.reserveCapacity(2 + cookies.count * 200)
        writer.output += "["
        for (index, cookie) in cookies.enumerated() {
            if index > 0 { writer.output += "," }
            writer.write(cookie)
        }
        writer.output += "]"
        return writer.output
    }
}

/// A minimal JSON writer for the cookie model.
struct JSONWriter {
    var output = ""

    mutating func write(_ change: CookieChange) {
        switch change {
        case .added(let cookie):
            output += #"{"kind":"added","cookie":"#
            write(cookie)
        case .replaced(let old, let new):
            output += #"{"kind":"replaced","cookie":"#
            write(new)
            output += #","old":"#
            write(old)
        case .removed(let cookie, let cause):
            output += #"{"kind":"removed","cookie":"#
            write(cookie)
            output += #","cause":""# + cause.rawValue + "\""
        }
        output += "}"
    }

    mutating func write(_ cookie: Cookie) {
        output += #"{"name":"#
        write(string: cookie.name)
        output += #","value":"#
        write(string: cookie.value)
        output += #","domain":"#
        write(string: cookie.domain)
        output += #","hostOnly":"# + (cookie.hostOnly ? "true" : "false")
        output += #","path":"#
        write(string: cookie.path)
        if let expires = cookie.expires { output += #","expires":"# + number(expires) }
        output += #","secure":"# + (cookie.secure ? "true" : "false")
        output += #","httpOnly":"# + (cookie.httpOnly ? "true" : "false")
        output += #","sameSite":""# + cookie.sameSite.rawValue + "\""
        output += #","creation":"# + number(cookie.creation)
        output += #","lastAccess":"# + number(cookie.lastAccess) + "}"
    }

    /// Shortest round-tripping form; distantPast and other finite values only (no NaN/inf).
    private func number(_ date: Date) -> String {
        let seconds = date.timeIntervalSince1970
        return seconds.isFinite ? "\(seconds)" : "0"
    }

    mutating func write(string: String) {
        output += "\""
        var plainStart = string.utf8.startIndex
        let bytes = string.utf8
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 {
                output += String(string[plainStart..<index])
                switch byte {
                case UInt8(ascii: "\""): output += "\\\""
                case UInt8(ascii: "\\"): output += "\\\\"
                case 0x09: output += "\\t"
                case 0x0A: output += "\\n"
                case 0x0D: output += "\\r"
                default:
                    let hex = String(byte, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                }
                plainStart = bytes.index(after: index)
            }
            index = bytes.index(after: index)
        }
        output += String(string[plainStart..<bytes.endIndex])
        output += "\""
    }
}
