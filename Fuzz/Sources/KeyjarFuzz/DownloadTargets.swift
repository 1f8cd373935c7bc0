import Foundation
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
/// name is always one safe name: not empty, no directory part, no control characters, no
/// leading dot, at most `maximumBytes` (plus `-N` for the unique one).
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
        fuzzCheck(!name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "control character")
        fuzzCheck(!name.hasPrefix("."), "leading dot in \(name)")
        fuzzCheck(name.utf8.count <= SuggestedFilename.maximumBytes + 8, "name of \(name.utf8.count) bytes")
    }
}

/// Resume data: read or refused with a reason; what is read encodes back to itself.
func fuzzResumeData(_ bytes: [UInt8]) {
    guard let read = try? DownloadResumeData(Data(bytes)) else { return }
    fuzzCheck((try? DownloadResumeData(read.encoded())) == read, "resume data does not round-trip")
}
