import FoundationEssentials
import KeyjarCore

/// A response's status line and header fields as they arrived, in order, duplicates kept:
/// Set-Cookie must be stored line by line and never from Foundation's comma-joined dictionary.
package struct ResponseHead: Sendable {
    package var statusCode: Int
    /// "HTTP/1.1", "HTTP/2", …
    package var httpVersion: String
    package var reasonPhrase = ""
    package var fields: [(name: String, value: String)]

    package init(
        statusCode: Int,
        httpVersion: String,
        reasonPhrase: String = "",
        fields: [(name: String, value: String)]
    ) {
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.reasonPhrase = reasonPhrase
        self.fields = fields
    }

    /// RFC 9110 §15's reason phrase for a status code, for a head made without one (a cache
    /// hit: the cache keeps the status code only); "" for a code it does not name.
    package static func standardReasonPhrase(for statusCode: Int) -> String {
        switch statusCode {
        case 100: "Continue"
        case 101: "Switching Protocols"
        case 200: "OK"
        case 201: "Created"
        case 202: "Accepted"
        case 203: "Non-Authoritative Information"
        case 204: "No Content"
        case 205: "Reset Content"
        case 206: "Partial Content"
        case 300: "Multiple Choices"
        case 301: "Moved Permanently"
        case 302: "Found"
        case 303: "See Other"
        case 304: "Not Modified"
        case 307: "Temporary Redirect"
        case 308: "Permanent Redirect"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 406: "Not Acceptable"
        case 407: "Proxy Authentication Required"
        case 408: "Request Timeout"
        case 409: "Conflict"
        case 410: "Gone"
        case 411: "Length Required"
        case 412: "Precondition Failed"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 416: "Range Not Satisfiable"
        case 417: "Expectation Failed"
        case 421: "Misdirected Request"
        case 422: "Unprocessable Content"
        case 426: "Upgrade Required"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: ""
        }
    }

    package func values(of name: String) -> [String] {
        fields.compactMap { Self.sameFieldName($0.name, name) ? $0.value : nil }
    }

    /// Field names are ASCII tokens: compared byte by byte, not through Foundation's
    /// locale-aware comparison, which is far dearer on a request's path.
    package static func sameFieldName(_ left: String, _ right: String) -> Bool {
        left.utf8.count == right.utf8.count
            && zip(left.utf8, right.utf8).allSatisfy { asciiLowercased($0) == asciiLowercased($1) }
    }

    /// Whether `line` ("Name: value") is a field named `name`, ASCII case-insensitively.
    package static func isField(_ line: String, named name: String) -> Bool {
        var bytes = line.utf8.makeIterator()
        for expected in name.utf8 {
            guard let byte = bytes.next(), asciiLowercased(byte) == asciiLowercased(expected) else { return false }
        }
        return bytes.next() == UInt8(ascii: ":")
    }

    /// Only A–Z fold: OR-ing 0x20 into every byte would also equate "@" and "`", "[" and "{".
    @inline(__always)
    static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        byte &- UInt8(ascii: "A") < 26 ? byte | 0x20 : byte
    }

    package func value(of name: String) -> String? { fields.first { Self.sameFieldName($0.name, name) }?.value }

    /// Foundation's view: one entry per name, repeated fields joined by ", " as Apple does.
    package var headerDictionary: [String: String] {
        var dictionary: [String: String] = [:]
        dictionary.reserveCapacity(fields.count)
        guard fields.count <= 32 else {
            var canonicalNames: [String: String] = [:]
            for (name, value) in fields {
                let folded = String(decoding: name.utf8.map(Self.asciiLowercased), as: UTF8.self)
                let key = canonicalNames[folded, default: name]
                canonicalNames[folded] = key
                if let existing = dictionary[key] {
                    dictionary[key] = existing + ", " + value
                } else {
                    dictionary[key] = value
                }
            }
            return dictionary
        }
        for (index, (name, value)) in fields.enumerated() {
            // A repeated field joins the first spelling of its name. Heads are short, so a scan
            // of the fields before costs less than lower-casing every name into a second
            // dictionary.
            if let first = fields[..<index].first(where: { Self.sameFieldName($0.name, name) }) {
                dictionary[first.name, default: ""] += ", " + value
            } else {
                dictionary[name] = value
            }
        }
        return dictionary
    }

    /// The head as text lines: the status line, then one `Name: value` line per field.
    package var lines: [String] {
        let status = "\(httpVersion) \(statusCode)" + (reasonPhrase.isEmpty ? "" : " \(reasonPhrase)")
        return [status] + fields.map { "\($0.name): \($0.value)" }
    }
}

/// Reassembles response heads from the lines libcurl hands to its header callback.
package struct ResponseHeadParser {
    /// Heads larger than this are a misbehaving server (libcurl 7.88 sets no total limit).
    static let maximumHeadBytes = 256 * 1024
    static let maximumFieldCount = 1_000

    package enum Outcome {
        case incomplete
        /// A final (non-1xx) head is complete.
        case head(ResponseHead)
        case tooLarge
        case malformed(String)
    }

    private var current: ResponseHead?
    private var bytes = 0

    package mutating func consume(_ raw: UnsafeBufferPointer<UInt8>) -> Outcome {
        bytes += raw.count
        guard bytes <= Self.maximumHeadBytes else { return .tooLarge }
        var end = raw.count
        while end > 0, raw[end - 1] == UInt8(ascii: "\n") || raw[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let lineBytes = UnsafeBufferPointer(rebasing: raw[..<end])
        if current != nil, let first = lineBytes.first, first != UInt8(ascii: " "), first != UInt8(ascii: "\t"),
            let colon = lineBytes.firstIndex(of: UInt8(ascii: ":")), !lineBytes.starts(with: "HTTP/".utf8)
        {
            return field(
                name: UnsafeBufferPointer(rebasing: lineBytes[..<colon]),
                value: UnsafeBufferPointer(rebasing: lineBytes[(colon + 1)...])
            )
        }
        if lineBytes.starts(with: "HTTP/".utf8) {
            // Split as bytes: splitting the String walks grapheme clusters.
            let parts = lineBytes.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: true)
            guard parts.count >= 2, let code = Int(String(decoding: parts[1], as: UTF8.self)),
                (100...999).contains(code)
            else {
                return .malformed(
                    "the status line '\(String(decoding: lineBytes, as: UTF8.self).prefix(80))' is not HTTP"
                )
            }
            var fields: [(name: String, value: String)] = []
            // Grown one field at a time, a short head reallocated its array several times.
            fields.reserveCapacity(16)
            current = ResponseHead(
                statusCode: code,
                httpVersion: String(decoding: parts[0], as: UTF8.self),
                reasonPhrase: parts.count > 2 ? String(decoding: parts[2], as: UTF8.self) : "",
                fields: fields
            )
            return .incomplete
        }
        guard var head = current else { return .incomplete }
        let line = String(decoding: lineBytes, as: UTF8.self)
        if line.isEmpty {
            current = nil
            bytes = 0
            // Interim responses (100 Continue, 103 Early Hints) are not responses to deliver.
            return head.statusCode < 200 ? .incomplete : .head(head)
        }
        if line.first == " " || line.first == "\t" {
            // obs-fold: a continuation of the previous field (RFC 9112 §5.2) becomes one space.
            if let last = head.fields.indices.last {
                head.fields[last].value += " " + line.trimmingWhitespace()
            }
        } else {
            return .malformed("the header line '\(line.prefix(80))' has no colon")
        }
        current = head
        return .incomplete
    }

    /// A `name: value` line, handled on bytes: one per header of every response.
    private mutating func field(name: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Outcome {
        guard !name.isEmpty, !name.contains(UInt8(ascii: " ")) else {
            return .malformed("the header line '\(String(decoding: name, as: UTF8.self).prefix(80))' has no field name")
        }
        // Optional whitespace around the value (RFC 9112 §5): spaces and tabs only.
        var start = value.startIndex
        var end = value.endIndex
        while start < end, value[start] == UInt8(ascii: " ") || value[start] == UInt8(ascii: "\t") { start += 1 }
        while end > start, value[end - 1] == UInt8(ascii: " ") || value[end - 1] == UInt8(ascii: "\t") { end -= 1 }
        // Appended in place: a copy of the head per line would make a long head quadratic.
        current?.fields.append(
            (
                String(decoding: name, as: UTF8.self),
                String(decoding: UnsafeBufferPointer(rebasing: value[start..<end]), as: UTF8.self)
            )
        )
        guard (current?.fields.count ?? 0) <= Self.maximumFieldCount else { return .tooLarge }
        return .incomplete
    }
}
