import Foundation
import KeyjarCore
import KeyjarLoader

/// A `data:` URL: parsed or refused with a reason, never a crash; a parse's media type is
/// `type/subtype` in lower case and its data is no longer than the URL.
func fuzzDataURL(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    guard let parsed = try? DataURL(text) else { return }
    fuzzCheck(parsed.mimeType.split(separator: "/", omittingEmptySubsequences: false).count == 2, parsed.mimeType)
    fuzzCheck(parsed.mimeType == parsed.mimeType.lowercased(), parsed.mimeType)
    fuzzCheck(parsed.data.count <= text.utf8.count, "data longer than the URL")
}

/// A Content-Disposition field and a URL path (separated by a newline): the suggested file
/// name is always one safe name: not empty, no directory part, no control or bidirectional
/// formatting characters, no leading dot, nothing named like Keyjar's own `.keyjar-` files, at
/// most `maximumBytes` (plus `-N` for the unique one).
func fuzzContentDisposition(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let parts = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
    _ = ContentDisposition(parts[0])
    let path = (parts.count > 1 ? parts[1] : "").addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? ""
    let url = URL(string: "http://example.com/" + path)
    let suggested = SuggestedFilename.name(contentDisposition: parts[0], url: url)
    var taken = 0
    let unique = SuggestedFilename.unique(suggested) { _ in
        taken += 1
        return taken < 3
    }
    for name in [suggested, unique] {
        fuzzCheck(!name.isEmpty, "empty name")
        fuzzCheck(!name.contains("/") && !name.contains("\\"), "directory in \(name)")
        fuzzCheck(!name.unicodeScalars.contains(where: \.isControlOrBidiFormat), "control or bidi character")
        fuzzCheck(!name.lowercased().contains(".keyjar-"), "named like a file Keyjar keeps: \(name)")
        fuzzCheck(!name.hasPrefix("."), "leading dot in \(name)")
        fuzzCheck(name.utf8.count <= SuggestedFilename.maximumBytes + 8, "name of \(name.utf8.count) bytes")
    }
}

/// Resume data: read or refused with a reason; what is read encodes back to itself.
func fuzzResumeData(_ bytes: [UInt8]) {
    guard let read = try? DownloadResumeData(Data(bytes)) else { return }
    fuzzCheck((try? DownloadResumeData(read.encoded())) == read, "resume data does not round-trip")
}

/// A MacBinary file: decoded or refused with a reason, never a crash; see `fuzzMacFile`.
func fuzzMacBinary(_ bytes: [UInt8]) { fuzzMacFile(bytes, MacBinaryDecoder.init) }

/// A BinHex 4.0 text: decoded or refused with a reason, never a crash; see `fuzzMacFile`.
func fuzzBinHex(_ bytes: [UInt8]) { fuzzMacFile(bytes, BinHexDecoder.init) }

/// Decodes `bytes` whole and in pieces (their size from the first byte): the two agree, on the
/// data fork or on the error, and a data fork decoded is as long as its header says.
private func fuzzMacFile<Decoder: MacFileStreamDecoder>(_ bytes: [UInt8], _ make: () -> Decoder) {
    var whole = make()
    let result = Result { () throws(MacFileDecodingError) in try whole.decode(bytes) }
    var piecewise = make()
    var dataFork: [UInt8] = []
    let size = Int(bytes.first ?? 0) % 61 + 1
    let inPieces = Result { () throws(MacFileDecodingError) in
        for start in stride(from: 0, to: bytes.count, by: size) {
            try piecewise.decode(Array(bytes[start..<min(start + size, bytes.count)]), into: &dataFork)
        }
        return (header: try piecewise.finish(), dataFork: dataFork)
    }
    switch (result, inPieces) {
    case (.success(let decoded), .success(let again)):
        fuzzCheck(decoded.header == again.header && decoded.dataFork == again.dataFork, "pieces of \(size) differ")
        fuzzCheck(decoded.dataFork.count == Int(decoded.header.dataLength), "a data fork of the wrong length")
    case (.failure(let error), .failure(let again)):
        fuzzCheck(error == again, "pieces of \(size): \(again), whole: \(error)")
        _ = error.description
    default:
        fuzzCheck(false, "whole: \(result), pieces of \(size): \(inPieces)")
    }
}
