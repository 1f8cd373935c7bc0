package import Foundation

/// Splits a `multipart/x-mixed-replace` body (server push: each part replaces the last) into
/// parts as bytes arrive, so each part reaches the delegate as a new response followed by its
/// data, as Apple's loader does. Body bytes are passed on at once, except the few at the end
/// that could be the start of a boundary.
///
/// What it holds is bounded whatever the server sends: a part's header block (at most
/// ``maximumHeaderBytes`` and ``maximumFields`` fields) and the rest of a delimiter's line
/// (``maximumLineBytes``); past them the body is malformed (``Piece/failed(_:)``). Each byte is
/// searched once, however the body is cut into pieces.
package struct MultipartReplaceSplitter {
    package enum Piece: Equatable {
        /// A new part begins; its header fields.
        case part([String: String])
        case data(Data)
        /// The body is malformed (why): nothing more is split.
        case failed(String)
    }

    package static let maximumHeaderBytes = 64 << 10
    package static let maximumFields = 100
    package static let maximumLineBytes = 1 << 10
    /// RFC 2046 §5.1.1: a boundary is 1 to 70 characters.
    package static let maximumBoundary = 70

    private enum State { case preamble, headers, body, done }

    private let delimiter: [UInt8]
    private var buffer: [UInt8] = []
    private var state = State.preamble
    /// Where the header block's end is looked for next: what was searched is not again.
    private var headerScan = 0

    /// The boundary from a `Content-Type: multipart/x-mixed-replace; boundary=…` value, or nil.
    package init?(contentType: String) {
        let parts = contentType.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "multipart/x-mixed-replace",
            let parameter = parts.dropFirst().first(where: { $0.lowercased().hasPrefix("boundary=") })
        else { return nil }
        var boundary = String(parameter.dropFirst("boundary=".count))
        if boundary.hasPrefix("\""), boundary.hasSuffix("\""), boundary.count >= 2 {
            boundary = String(boundary.dropFirst().dropLast())
        }
        guard !boundary.isEmpty, boundary.utf8.count <= Self.maximumBoundary else { return nil }
        delimiter = Array("--\(boundary)".utf8)
    }

    /// Ends the splitting with why the body is malformed.
    private mutating func fail(_ reason: String, _ pieces: inout [Piece]) -> [Piece] {
        state = .done
        buffer.removeAll()
        pieces.append(.failed(reason))
        return pieces
    }

    package mutating func feed(_ data: Data) -> [Piece] {
        buffer.append(contentsOf: data)
        var pieces: [Piece] = []
        while true {
            switch state {
            case .done:
                buffer.removeAll()
                return pieces
            case .preamble:
                guard let range = find(delimiter, from: 0) else {
                    // Keep what could be the start of the first delimiter.
                    if buffer.count > delimiter.count { buffer.removeFirst(buffer.count - delimiter.count) }
                    return pieces
                }
                guard consumeDelimiterEnd(after: range.upperBound) else {
                    return buffer.count > delimiter.count + Self.maximumLineBytes
                        ? fail("a delimiter's line is over \(Self.maximumLineBytes) bytes", &pieces) : pieces
                }
            case .headers:
                if buffer.starts(with: [13, 10]) {
                    buffer.removeFirst(2)
                    pieces.append(.part([:]))
                    state = .body
                    continue
                }
                guard let end = find([13, 10, 13, 10], from: headerScan) else {
                    guard buffer.count <= Self.maximumHeaderBytes else {
                        return fail("a part's header fields are over \(Self.maximumHeaderBytes >> 10) KiB", &pieces)
                    }
                    headerScan = max(0, buffer.count - 3)
                    return pieces
                }
                headerScan = 0
                guard end.lowerBound <= Self.maximumHeaderBytes else {
                    return fail("a part's header fields are over \(Self.maximumHeaderBytes >> 10) KiB", &pieces)
                }
                let text = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                let lines = text.components(separatedBy: "\r\n")
                guard lines.count <= Self.maximumFields else {
                    return fail("a part has more than \(Self.maximumFields) header fields", &pieces)
                }
                var fields: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    fields[String(line[..<colon])] = line[line.index(after: colon)...].trimmingCharacters(
                        in: .whitespaces
                    )
                }
                buffer.removeFirst(end.upperBound)
                pieces.append(.part(fields))
                state = .body
            case .body:
                let marker = [13, 10] + delimiter
                if let range = find(marker, from: 0) {
                    if range.lowerBound > 0 { pieces.append(.data(Data(buffer[..<range.lowerBound]))) }
                    guard consumeDelimiterEnd(after: range.upperBound, keepingFrom: range.lowerBound) else {
                        return buffer.count > marker.count + Self.maximumLineBytes
                            ? fail("a delimiter's line is over \(Self.maximumLineBytes) bytes", &pieces) : pieces
                    }
                } else {
                    let safe = buffer.count - (marker.count - 1)
                    if safe > 0 {
                        pieces.append(.data(Data(buffer[..<safe])))
                        buffer.removeFirst(safe)
                    }
                    return pieces
                }
            }
        }
    }

    /// After a delimiter: `--` ends the body, else the rest of the line is skipped and the
    /// next part's headers follow. False when more bytes are needed.
    private mutating func consumeDelimiterEnd(after end: Int, keepingFrom start: Int = 0) -> Bool {
        guard buffer.count >= end + 2 else {
            if start > 0 { buffer.removeFirst(start) }
            return false
        }
        if buffer[end] == UInt8(ascii: "-"), buffer[end + 1] == UInt8(ascii: "-") {
            state = .done
            return true
        }
        guard let lineEnd = find([13, 10], from: end) else {
            if start > 0 { buffer.removeFirst(start) }
            return false
        }
        buffer.removeFirst(lineEnd.upperBound)
        state = .headers
        return true
    }

    private func find(_ needle: [UInt8], from start: Int) -> Range<Int>? {
        guard !needle.isEmpty, buffer.count - start >= needle.count else { return nil }
        var index = start
        while index <= buffer.count - needle.count {
            if buffer[index] == needle[0], buffer[index..<(index + needle.count)].elementsEqual(needle) {
                return index..<(index + needle.count)
            }
            index += 1
        }
        return nil
    }
}
