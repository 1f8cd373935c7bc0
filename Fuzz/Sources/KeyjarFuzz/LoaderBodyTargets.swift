import Foundation
import KeyjarLoader

/// A coded body: its first byte picks the codings (two bits each, up to three, the last
/// applied first as a response's would be undone), its second how the rest is cut into pieces.
/// Decoded whole and in pieces: both decode to the same bytes or both fail with a reason,
/// never a crash; more codings than `maximumCodings` are refused up front.
func fuzzContentDecoder(_ bytes: [UInt8]) {
    guard bytes.count >= 2 else { return }
    let names = ["gzip", "deflate", "br", "zstd"]
    let count = Int(bytes[0] >> 6)
    let plan = (0..<count).compactMap { ContentCoding(token: names[Int(bytes[0] >> (2 * $0)) & 3]) }
    let body = Array(bytes.dropFirst(2))
    let piece = max(1, Int(bytes[1]))

    func decode(inPiecesOf size: Int) -> Result<[UInt8], ContentDecodingError> {
        let decoder: ContentDecoder
        do {
            decoder = try ContentDecoder(plan)
        } catch {
            return .failure(error)
        }
        var output: [UInt8] = []
        var start = 0
        repeat {
            let end = min(body.count, start + size)
            do {
                try body[start..<end].withUnsafeBytes { input in
                    try decoder.decode(input) { output.append(contentsOf: $0) }
                }
            } catch let error as ContentDecodingError {
                return .failure(error)
            } catch {
                fuzzCheck(false, "an error that is not a ContentDecodingError: \(error)")
            }
            start = end
        } while start < body.count
        return .success(output)
    }
    let whole = decode(inPiecesOf: max(1, body.count))
    let pieces = decode(inPiecesOf: piece)
    switch (whole, pieces) {
    case (.success(let a), .success(let b)): fuzzCheck(a == b, "whole and in pieces decode differently")
    case (.failure(let error), _), (_, .failure(let error)):
        fuzzCheck(!error.description.isEmpty, "a failure without a reason")
    }
    fuzzCheck(
        (try? ContentDecoder(Array(repeating: .gzip, count: ContentDecoder.maximumCodings + 1))) == nil,
        "too many codings taken"
    )
}

/// A multipart/x-mixed-replace body: its first line is the boundary, the rest is split whole and
/// in pieces (their size from the second line's first byte). Never a crash; the two give the
/// same parts and the same bytes in each (or fail alike), and no part has more fields than the
/// splitter's bound.
func fuzzMultipartSplitter(_ bytes: [UInt8]) {
    let lines = bytes.split(separator: UInt8(ascii: "\n"), maxSplits: 2, omittingEmptySubsequences: false)
    guard lines.count == 3, let size = lines[1].first else { return }
    let boundary = String(decoding: lines[0], as: UTF8.self)
    let body = Data(lines[2])
    guard var whole = MultipartReplaceSplitter(contentType: "multipart/x-mixed-replace; boundary=\(boundary)"),
        var cut = MultipartReplaceSplitter(contentType: "multipart/x-mixed-replace; boundary=\(boundary)")
    else { return }

    /// Parts as (fields, bytes), data pieces joined as bytes (decoding each piece as text would
    /// make a character cut between pieces differ); a failure as a part of its own.
    func parts(_ pieces: [MultipartReplaceSplitter.Piece]) -> [[UInt8]] {
        var parts: [[UInt8]] = []
        for piece in pieces {
            switch piece {
            case .part(let fields):
                fuzzCheck(fields.count <= MultipartReplaceSplitter.maximumFields, "\(fields.count) fields")
                parts.append(Array("part \(fields.sorted { $0.key < $1.key })\n".utf8))
            case .data(let data):
                if parts.isEmpty { parts.append([]) }
                parts[parts.count - 1] += data
            case .failed(let reason): parts.append(Array("failed \(reason)".utf8))
            }
        }
        return parts
    }
    let all = parts(whole.feed(body))
    var pieces: [MultipartReplaceSplitter.Piece] = []
    var start = body.startIndex
    while start < body.endIndex {
        let end = min(body.endIndex, start + max(1, Int(size)))
        pieces += cut.feed(body[start..<end])
        start = end
    }
    let inPieces = parts(pieces)
    // A body cut short of a bound may fail later in pieces (the bound is reached only then);
    // until then they agree.
    let failed = Array("failed".utf8)
    let agreeing = zip(all, inPieces).prefix { !$0.0.starts(with: failed) && !$0.1.starts(with: failed) }
    fuzzCheck(agreeing.allSatisfy { $0.0 == $0.1 }, "whole and in pieces split differently")
}
