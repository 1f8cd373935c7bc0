import Foundation
import FoundationNetworking

/// A response's status line and header fields as they arrived, in order, duplicates kept:
/// Set-Cookie must be stored line by line and never from Foundation's comma-joined dictionary.
struct ResponseHead: Sendable {
    var statusCode: Int
    /// "HTTP/1.1", "HTTP/2", …
    var httpVersion: String
    var reasonPhrase = ""
    var fields: [(name: String, value: String)]

    func values(of name: String) -> [String] {
        fields.compactMap { $0.name.caseInsensitiveCompare(name) == .orderedSame ? $0.value : nil }
    }

    func value(of name: String) -> String? { values(of: name).first }

    /// Foundation's view: one entry per name, repeated fields joined by ", " as Apple does.
    var headerDictionary: [String: String] {
        var dictionary: [String: String] = [:]
        var canonicalNames: [String: String] = [:]
        for (name, value) in fields {
            let key = canonicalNames[name.lowercased(), default: name]
            canonicalNames[name.lowercased()] = key
            if let existing = dictionary[key] { dictionary[key] = existing + ", " + value } else { dictionary[key] = value }
        }
        return dictionary
    }

    /// The head as text lines: the status line, then one `Name: value` line per field.
    var lines: [String] {
        let status = "\(httpVersion) \(statusCode)" + (reasonPhrase.isEmpty ? "" : " \(reasonPhrase)")
        return [status] + fields.map { "\($0.name): \($0.value)" }
    }

    func httpResponse(for url: URL) -> HTTPURLResponse? {
        HTTPURLResponse(url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: headerDictionary)
    }
}

/// Reassembles response heads from the lines libcurl hands to its header callback.
struct ResponseHeadParser {
    /// Heads larger than this are a misbehaving server (libcurl 7.88 sets no total limit).
    static let maximumHeadBytes = 256 * 1024
    static let maximumFieldCount = 1_000

    enum Outcome {
        case incomplete
        /// A final (non-1xx) head is complete.
        case head(ResponseHead)
        case tooLarge
        case malformed(String)
    }

    private var current: ResponseHead?
    private var bytes = 0

    mutating func consume(_ raw: UnsafeBufferPointer<UInt8>) -> Outcome {
        bytes += raw.count
        guard bytes <= Self.maximumHeadBytes else { return .tooLarge }
        var end = raw.count
        while end > 0, raw[end - 1] == UInt8(ascii: "\n") || raw[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        let line = String(decoding: UnsafeBufferPointer(rebasing: raw[..<end]), as: UTF8.self)
        if line.hasPrefix("HTTP/") {
            let parts = line.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
            guard parts.count >= 2, let code = Int(parts[1]), (100...999).contains(code) else {
                return .malformed("the status line '\(line.prefix(80))' is not HTTP")
            }
            current = ResponseHead(
                statusCode: code, httpVersion: String(parts[0]), reasonPhrase: parts.count > 2 ? String(parts[2]) : "", fields: [])
            return .incomplete
        }
        guard var head = current else { return .incomplete }
        if line.isEmpty {
            current = nil
            bytes = 0
            // Interim responses (100 Continue, 103 Early Hints) are not responses to deliver.
            return head.statusCode < 200 ? .incomplete : .head(head)
        }
        if line.first == " " || line.first == "\t" {
            // obs-fold: a continuation of the previous field (RFC 9112 §5.2) becomes one space.
            if let last = head.fields.indices.last {
                head.fields[last].value += " " + line.trimmingCharacters(in: .whitespaces)
            }
        } else if let colon = line.firstIndex(of: ":") {
            let name = String(line[..<colon])
            guard !name.isEmpty, !name.contains(" ") else { return .malformed("the header line '\(line.prefix(80))' has no field name") }
            head.fields.append((name, line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
            guard head.fields.count <= Self.maximumFieldCount else { return .tooLarge }
        } else {
            return .malformed("the header line '\(line.prefix(80))' has no colon")
        }
        current = head
        return .incomplete
    }
}
