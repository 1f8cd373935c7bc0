import Foundation

/// One range of a `Range: bytes=…` field (RFC 9110 §14.1.2), as written.
public enum ByteRangeSpec: Sendable, Hashable {
    /// `first-last`
    case closed(first: Int, last: Int)
    /// `first-`: to the end.
    case from(first: Int)
    /// `-length`: the last `length` bytes.
    case suffix(length: Int)
}

/// What a set of ranges selects of a representation of a known length (RFC 9110 §14.1.2).
public enum ByteRangeResolution: Sendable, Hashable {
    /// The satisfiable ranges, clipped to the representation, sorted and with overlapping and
    /// adjacent ones merged.
    case satisfiable([ClosedRange<Int>])
    /// None is satisfiable: a 416 (RFC 9110 §15.5.17).
    case unsatisfiable
}

/// A `Range` field's value with the `bytes` unit (RFC 9110 §14.2).
public struct ByteRangeRequest: Sendable, Hashable {
    public var ranges: [ByteRangeSpec]

    public init(ranges: [ByteRangeSpec]) { self.ranges = ranges }

    /// Parses `bytes=0-99, 200-, -50`; nil when the value is not a valid bytes range set (another
    /// unit, a `last` before its `first`, no range): a recipient ignores such a field (§14.2).
    public init?(_ value: String) {
        let trimmed = value.trimmingWhitespace
        guard let equals = trimmed.firstIndex(of: "="),
            String(trimmed[..<equals]).trimmingWhitespace.lowercased() == "bytes"
        else { return nil }
        var ranges: [ByteRangeSpec] = []
        for member in HTTPHeaderFields.splitList(String(trimmed[trimmed.index(after: equals)...])) {
            guard let dash = member.firstIndex(of: "-") else { return nil }
            let first = String(member[..<dash]).trimmingWhitespace
            let last = String(member[member.index(after: dash)...]).trimmingWhitespace
            if first.isEmpty {
                guard let length = Self.number(last) else { return nil }
                ranges.append(.suffix(length: length))
            } else {
                guard let start = Self.number(first) else { return nil }
                if last.isEmpty {
                    ranges.append(.from(first: start))
                } else {
                    guard let end = Self.number(last), end >= start else { return nil }
                    ranges.append(.closed(first: start, last: end))
                }
            }
        }
        guard !ranges.isEmpty else { return nil }
        self.ranges = ranges
    }

    /// 1*DIGIT; a number too large for an Int is as good as infinite.
    private static func number(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else {
            return nil
        }
        return Int(text) ?? Int.max
    }

    /// The ranges against a representation of `length` bytes: an int-range is satisfiable when
    /// its first byte exists, a suffix-range when its length is not zero (§14.1.2); the last
    /// position is clipped to the end.
    public func resolved(length: Int) -> ByteRangeResolution {
        var selected: [ClosedRange<Int>] = []
        for range in ranges {
            switch range {
            case .closed(let first, let last) where first < length:
                selected.append(first...min(last, length - 1))
            case .from(let first) where first < length:
                selected.append(first...(length - 1))
            case .suffix(let count) where count > 0 && length > 0:
                selected.append(max(0, length - count)...(length - 1))
            default:
                continue
            }
        }
        guard !selected.isEmpty else { return .unsatisfiable }
        return .satisfiable(ByteRanges.merged(selected))
    }
}

/// A `Content-Range` field's value (RFC 9110 §14.4): `bytes 0-99/1234`, `bytes 0-99/*`, or a
/// 416's `bytes */1234`.
public struct ContentRange: Sendable, Hashable {
    /// The range the content holds; nil for a 416's unsatisfied-range.
    public var range: ClosedRange<Int>?
    /// The representation's length; nil when unknown (`*`).
    public var completeLength: Int?

    public init(range: ClosedRange<Int>?, completeLength: Int?) {
        self.range = range
        self.completeLength = completeLength
    }

    public init?(_ value: String) {
        let trimmed = value.trimmingWhitespace
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "bytes" else { return nil }
        let rest = String(trimmed[trimmed.index(after: space)...]).trimmingWhitespace
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let rangePart = String(rest[..<slash])
        let lengthPart = String(rest[rest.index(after: slash)...])
        if lengthPart == "*" {
            completeLength = nil
        } else {
            guard lengthPart.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
                let length = Int(lengthPart)
            else { return nil }
            completeLength = length
        }
        if rangePart == "*" {
            // An unsatisfied-range names the complete length (§14.4).
            guard completeLength != nil else { return nil }
            range = nil
            return
        }
        let bounds = rangePart.split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, bounds.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }),
            let first = Int(bounds[0]), let last = Int(bounds[1]), last >= first
        else { return nil }
        // A range past the complete length is invalid (§14.4).
        if let completeLength, last >= completeLength { return nil }
        range = first...last
    }

    /// The field's value, as `init?(_:)` reads it.
    public var fieldValue: String {
        let length = completeLength.map(String.init) ?? "*"
        guard let range else { return "bytes */\(length)" }
        return "bytes \(range.lowerBound)-\(range.upperBound)/\(length)"
    }
}

/// What a cache does with a Range request that a complete stored response (a 200) would answer.
public enum CachedRangeAnswer: Sendable, Hashable {
    /// The whole stored response, a 200: the request has no Range or one to ignore (another
    /// unit, invalid, an If-Range that does not match, several ranges: §14.2 lets a server
    /// ignore Range, and a 200 is always a correct answer).
    case whole
    /// A 206 (RFC 9110 §15.3.7) with these fields, holding `range` of the stored body.
    case partial(ClosedRange<Int>, headers: HTTPHeaderFields)
    /// A 416 (§15.5.17) with these fields and no content: no range is satisfiable.
    case unsatisfiable(headers: HTTPHeaderFields)
    /// The stored body is not the representation the ranges count (its content coding was
    /// undone, or its length is not the one the response declared): the request goes on.
    case forward
}

/// RFC 9110 §14 and RFC 9111 §3.3–§3.4 for a cache, as pure functions.
public enum ByteRanges {
    /// Sorted, overlapping and adjacent ranges merged.
    public static func merged(_ ranges: [ClosedRange<Int>]) -> [ClosedRange<Int>] {
        var result: [ClosedRange<Int>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            // `&+`: a range may end at Int.max (a hostile Content-Range); nothing follows it.
            if let last = result.last, last.upperBound == .max || range.lowerBound <= last.upperBound &+ 1 {
                result[result.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }

    /// How a stored complete response (`stored`, its body `bodyLength` bytes) answers a request
    /// for it. Only GET has ranges (§14.2), only a 200 is a complete representation.
    public static func answer(
        method: String,
        requestHeaders: HTTPHeaderFields,
        stored: StoredResponse,
        bodyLength: Int
    ) -> CachedRangeAnswer {
        guard method == "GET", stored.statusCode == 200, let field = requestHeaders["Range"] else { return .whole }
        guard let request = ByteRangeRequest(field) else { return .whole }
        // The loader keeps a body it decoded under the fields that name the coding; ranges
        // count the coded bytes, which are not stored.
        let codings = stored.headers.listMembers("Content-Encoding").filter { $0.lowercased() != "identity" }
        if !codings.isEmpty { return .forward }
        if let declared = stored.headers["Content-Length"].flatMap({ Int($0.trimmingWhitespace) }),
            declared != bodyLength
        {
            return .forward
        }
        if let condition = requestHeaders["If-Range"], !ifRangeMatches(condition, stored: stored) { return .whole }
        switch request.resolved(length: bodyLength) {
        case .unsatisfiable:
            var headers = stored.headers
            headers.remove("Content-Type")
            headers.replace("Content-Length", with: ["0"])
            headers.replace(
                "Content-Range",
                with: [ContentRange(range: nil, completeLength: bodyLength).fieldValue]
            )
            return .unsatisfiable(headers: headers)
        case .satisfiable(let ranges):
            // Several ranges that stay apart would need a multipart/byteranges body.
            guard ranges.count == 1, let range = ranges.first else { return .whole }
            // The whole representation asked for as a range: still a 206 (a client that asks
            // for a range reads Content-Range).
            var headers = stored.headers
            headers.replace("Content-Length", with: [String(range.count)])
            headers.replace(
                "Content-Range",
                with: [ContentRange(range: range, completeLength: bodyLength).fieldValue]
            )
            return .partial(range, headers: headers)
        }
    }

    /// If-Range (RFC 9110 §13.1.5): an entity tag matches the stored strong ETag by strong
    /// comparison; a date matches a strong Last-Modified (at least a second before the
    /// response's Date, §8.8.2.2) exactly.
    public static func ifRangeMatches(_ condition: String, stored: StoredResponse) -> Bool {
        let value = condition.trimmingWhitespace
        if value.hasPrefix("\"") || value.hasPrefix("W/") {
            guard let tag = stored.headers["ETag"]?.trimmingWhitespace else { return false }
            return isStrongTag(value) && isStrongTag(tag) && value == tag
        }
        guard let modified = stored.headers["Last-Modified"]?.trimmingWhitespace, modified == value,
            let modifiedDate = HTTPDate.parse(modified)
        else { return false }
        return stored.date.timeIntervalSince(modifiedDate) >= 1
    }

    /// A strong entity tag: quoted, no `W/` (RFC 9110 §8.8.3).
    public static func isStrongTag(_ tag: String) -> Bool {
        tag.count >= 2 && tag.hasPrefix("\"") && tag.hasSuffix("\"")
    }
}

// MARK: Partial responses (RFC 9111 §3.3, §3.4)

/// A stored response that holds part (or all) of a representation: a 206 with one
/// Content-Range, or a 200 (all of it, its Content-Length long).
public struct StoredPiece: Sendable, Hashable {
    /// The representation's bytes this piece holds.
    public var range: ClosedRange<Int>
    /// The representation's length, when the piece says.
    public var completeLength: Int?
    public var response: StoredResponse

    /// nil for a response that is not one piece of a representation: not a 200 or 206, a
    /// multipart/byteranges 206 (no single Content-Range), an empty one.
    public init?(_ response: StoredResponse) {
        switch response.statusCode {
        case 206:
            guard let field = response.headers["Content-Range"], let contentRange = ContentRange(field),
                let range = contentRange.range
            else { return nil }
            self.range = range
            completeLength = contentRange.completeLength
        case 200:
            guard let length = response.headers["Content-Length"].flatMap({ Int($0.trimmingWhitespace) }), length > 0
            else { return nil }
            range = 0...(length - 1)
            completeLength = length
        default:
            return nil
        }
        self.response = response
    }
}

/// What a cache makes of the pieces it holds of one representation (RFC 9111 §3.4).
public enum PieceCombination: Sendable, Hashable {
    /// The pieces cover the representation: a complete 200 with these fields, its body the
    /// segments in order.
    case complete(headers: HTTPHeaderFields, segments: [PieceSegment])
    /// Contiguous or overlapping pieces that do not cover the representation: one piece, a
    /// 206 with these fields (the newest piece's, Content-Range and Content-Length those of
    /// `range`), its body the segments in order.
    case piece(range: ClosedRange<Int>, headers: HTTPHeaderFields, segments: [PieceSegment])
    /// Pieces with holes between them: the merged ranges they hold. They do not make one piece.
    case partial([ClosedRange<Int>])
    /// The pieces' strong validators do not match: they are not of one representation and
    /// must not be combined; only the newest is kept.
    case mismatch
}

/// The bytes `range` of the representation, taken from piece `piece` (an index into the pieces
/// given) at `offset` in its body.
public struct PieceSegment: Sendable, Hashable {
    public var piece: Int
    public var range: ClosedRange<Int>
    public var offset: Int

    public init(piece: Int, range: ClosedRange<Int>, offset: Int) {
        self.piece = piece
        self.range = range
        self.offset = offset
    }
}

extension ByteRanges {
    /// §3.4: whether two stored pieces are of one representation: both have a strong ETag and
    /// the tags are the same. (Last-Modified alone is not taken: a strong date needs a Date a
    /// second after it in both, and any change within that second goes unseen.)
    public static func validatorsMatch(_ a: StoredResponse, _ b: StoredResponse) -> Bool {
        guard let first = a.headers["ETag"]?.trimmingWhitespace, let second = b.headers["ETag"]?.trimmingWhitespace
        else { return false }
        return isStrongTag(first) && first == second
    }

    /// Combines stored pieces of one representation (§3.4). The newest piece (by response
    /// time) gives the fields of a complete result, its Content-Range removed and its
    /// Content-Length the complete length (§3.4: the new response's fields are used, §3.2).
    /// Where pieces overlap, the newest one's bytes are taken.
    public static func combine(_ pieces: [StoredPiece]) -> PieceCombination {
        guard
            let newestIndex = pieces.indices.max(by: {
                pieces[$0].response.responseTime < pieces[$1].response.responseTime
            })
        else { return .partial([]) }
        let newest = pieces[newestIndex]
        guard pieces.allSatisfy({ validatorsMatch($0.response, newest.response) }) else { return .mismatch }
        let lengths = Set(pieces.compactMap(\.completeLength))
        guard lengths.count <= 1 else { return .mismatch }
        let held = merged(pieces.map(\.range))
        // Pieces with a hole between them are not one piece: the cache keeps one per variant.
        guard held.count == 1, let range = held.first else { return .partial(held) }
        guard let segments = segments(of: pieces, covering: range) else { return .partial(held) }
        var headers = newest.response.headers
        headers.replace("Content-Length", with: [String(range.count)])
        guard let length = lengths.first, range == 0...(length - 1) else {
            headers.replace(
                "Content-Range",
                with: [ContentRange(range: range, completeLength: lengths.first).fieldValue]
            )
            return .piece(range: range, headers: headers, segments: segments)
        }
        headers.remove("Content-Range")
        return .complete(headers: headers, segments: segments)
    }

    /// Where each byte of `range` comes from: at each position, the newest piece that holds it,
    /// as far as it goes before a newer one starts. Nil when a position is in no piece.
    static func segments(of pieces: [StoredPiece], covering range: ClosedRange<Int>) -> [PieceSegment]? {
        let order = pieces.indices.sorted { pieces[$0].response.responseTime > pieces[$1].response.responseTime }
        var segments: [PieceSegment] = []
        var position = range.lowerBound
        while position <= range.upperBound {
            guard let index = order.first(where: { pieces[$0].range.contains(position) }) else { return nil }
            var end = min(pieces[index].range.upperBound, range.upperBound)
            for newer in order.prefix(while: { $0 != index }) where pieces[newer].range.lowerBound > position {
                end = min(end, pieces[newer].range.lowerBound - 1)
            }
            segments.append(
                PieceSegment(piece: index, range: position...end, offset: position - pieces[index].range.lowerBound)
            )
            position = end + 1
        }
        return segments
    }

    /// §3.3: why a 206 cannot be stored as a piece of its representation (nil: it can). This
    /// cache keeps a 206 only when it can combine it later and answer ranges from it: exactly
    /// one Content-Range with a known complete length (a multipart/byteranges 206 has none), a
    /// strong entity tag (the only validator §3.4 lets pieces be combined by), and no content
    /// coding (the loader decodes the content, and ranges count the coded bytes).
    public static func pieceRefusal(responseHeaders: HTTPHeaderFields) -> String? {
        let ranges = responseHeaders.values("Content-Range")
        guard ranges.count == 1, let contentRange = ContentRange(ranges[0]), contentRange.range != nil else {
            return "a 206 without exactly one Content-Range"
        }
        guard contentRange.completeLength != nil else { return "a 206 of a representation of unknown length" }
        let tags = responseHeaders.values("ETag")
        guard tags.count == 1, isStrongTag(tags[0].trimmingWhitespace) else { return "a 206 without a strong ETag" }
        if responseHeaders.listMembers("Content-Encoding").contains(where: { $0.lowercased() != "identity" }) {
            return "a 206 with a content coding"
        }
        return nil
    }

    /// How a stored piece (`stored`, a 206 whose body is `bodyLength` bytes) answers a GET with
    /// `requestHeaders`: the bytes of its body to send (`body`, offsets into the piece's body)
    /// and the 206's fields. Nil when it cannot: no Range, one to ignore (several ranges, an
    /// If-Range that does not match: a full response is needed), a range not wholly within
    /// the piece, or a body that is not the piece's range.
    public static func answer(
        fromPiece stored: StoredResponse,
        method: String,
        requestHeaders: HTTPHeaderFields,
        bodyLength: Int
    ) -> (body: ClosedRange<Int>, headers: HTTPHeaderFields)? {
        guard method == "GET", let field = requestHeaders["Range"], let request = ByteRangeRequest(field),
            let piece = StoredPiece(stored), piece.response.statusCode == 206, let length = piece.completeLength,
            piece.range.count == bodyLength, pieceRefusal(responseHeaders: stored.headers) == nil
        else { return nil }
        if let condition = requestHeaders["If-Range"], !ifRangeMatches(condition, stored: stored) { return nil }
        guard case .satisfiable(let ranges) = request.resolved(length: length), ranges.count == 1,
            let range = ranges.first, piece.range.lowerBound <= range.lowerBound,
            range.upperBound <= piece.range.upperBound
        else { return nil }
        var headers = stored.headers
        headers.replace("Content-Length", with: [String(range.count)])
        headers.replace("Content-Range", with: [ContentRange(range: range, completeLength: length).fieldValue])
        let offset = range.lowerBound - piece.range.lowerBound
        return (offset...(offset + range.count - 1), headers)
    }
}
