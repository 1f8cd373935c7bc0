import Foundation
public import KeyjarCore

/// The JSON form of a ``StoreEvent``, version 1: exactly the shape its `Codable` conformance
/// reads, times as Unix seconds. Keyjar writes it in two places that must not change together
/// by accident: the wire protocol's `event` messages (Schemas/protocol.md) and keyjard's change
/// log (Schemas/change-log.md), which records this version beside every entry. A new shape
/// gets a new version; readers of the log decide what to do with entries of an older one.
public enum StoreEventJSON {
    /// The version this build writes.
    public static let version = 1

    /// The event as version-1 JSON. Cookie events are written by hand: an import of 100,000
    /// cookies is one event, and Foundation's encoder spends seconds on it. Others are rare and
    /// small.
    public static func encode(_ event: StoreEvent) -> String {
        guard case .cookies(let changes) = event else {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .secondsSince1970
            return (try? encoder.encode(event)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
        var writer = JSONWriter()
        writer.bytes.reserveCapacity(64 + changes.count * 260)
        writer.raw(#"{"cookies":{"changes":["#)
        for (index, change) in changes.enumerated() {
            if index > 0 { writer.raw(",") }
            writer.write(change)
        }
        writer.raw("]}}")
        return writer.output
    }

    /// A version-1 event; Foundation's decoder, which words its errors (the fast paths of the
    /// wire protocol are checked against it).
    public static func decode(_ bytes: some Sequence<UInt8>) throws -> StoreEvent {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return try decoder.decode(StoreEvent.self, from: Data(bytes))
    }
}

/// A minimal JSON writer for the cookie model, appending bytes (String appends piece by piece
/// cost several times more).
package struct JSONWriter {
    package var bytes: [UInt8] = []

    package init() {}

    package var output: String { String(decoding: bytes, as: UTF8.self) }

    @inline(__always)
    package mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
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

    /// Cookies as a JSON array in their `Codable` shape: requests, replies and snapshots that
    /// carry up to 100,000 of them.
    package mutating func write(cookies: [Cookie]) {
        raw("[")
        for (index, cookie) in cookies.enumerated() {
            if index > 0 { raw(",") }
            write(cookie)
        }
        raw("]")
    }

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
            write(number: expires)
        }
        if cookie.secure { raw(#","secure":true"#) } else { raw(#","secure":false"#) }
        if cookie.httpOnly { raw(#","httpOnly":true,"sameSite":""#) } else { raw(#","httpOnly":false,"sameSite":""#) }
        bytes.append(contentsOf: cookie.sameSite.rawValue.utf8)
        raw(#"","creation":"#)
        write(number: cookie.creation)
        raw(#","lastAccess":"#)
        write(number: cookie.lastAccess)
        raw("}")
    }

    /// Shortest round-tripping form; a non-finite time (never stored) is written as 0.
    private mutating func write(number date: Date) {
        let seconds = date.timeIntervalSince1970
        bytes.append(contentsOf: (seconds.isFinite ? "\(seconds)" : "0").utf8)
    }

    package mutating func write(integer: some BinaryInteger) {
        bytes.append(contentsOf: "\(integer)".utf8)
    }

    package mutating func write(bool: Bool) {
        if bool { raw("true") } else { raw("false") }
    }

    package mutating func write(string: String) {
        bytes.append(UInt8(ascii: "\""))
        var string = string
        // Runs that need no escaping are copied whole: cookie headers and imported files are
        // long, and appending byte by byte dominated their encoding.
        string.withUTF8 { utf8 in
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if runStart < index { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index])) }
                writeEscape(byte)
                runStart = index + 1
            }
            if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private mutating func writeEscape(_ byte: UInt8) {
        switch byte {
        case UInt8(ascii: "\""): raw("\\\"")
        case UInt8(ascii: "\\"): raw("\\\\")
        case 0x09: raw("\\t")
        case 0x0A: raw("\\n")
        case 0x0D: raw("\\r")
        default:
            func hexDigit(_ value: UInt8) -> UInt8 {
                value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
            }
            raw("\\u00")
            bytes.append(hexDigit(byte >> 4))
            bytes.append(hexDigit(byte & 0xF))
        }
    }
}

extension JSONValue {
    /// The value written back as JSON, numbers as they were read: how a fast path hands a small
    /// part of a message (a policy, a credential list) to `Codable`.
    package func serialized() -> [UInt8] {
        var writer = JSONWriter()
        writer.write(self)
        return writer.bytes
    }
}

extension JSONWriter {
    package mutating func write(_ value: JSONValue) {
        switch value {
        case .null: raw("null")
        case .bool(let flag): write(bool: flag)
        case .number(let text): bytes.append(contentsOf: text.utf8)
        case .string(let text): write(string: text)
        case .array(let values):
            raw("[")
            for (index, element) in values.enumerated() {
                if index > 0 { raw(",") }
                write(element)
            }
            raw("]")
        case .object(let members):
            raw("{")
            for (index, member) in members.enumerated() {
                if index > 0 { raw(",") }
                write(string: member.key)
                raw(":")
                write(member.value)
            }
            raw("}")
        }
    }
}
