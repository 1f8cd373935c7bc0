import Foundation
import FoundationNetworking
import KeyjarLocks
import Testing

@testable import KeyjarLoader

/// File types by name, from globs2 text and from the system's database.
struct SharedMIMEInfoTests {
    static let globs = """
        # comment
        80:text/html:*.html
        50:application/xhtml+xml:*.html
        50:application/pdf:*.pdf
        50:application/gzip:*.gz
        50:application/x-compressed-tar:*.tar.gz
        50:text/x-makefile:makefile
        50:text/x-readme:README*
        50:text/x-c++src:*.C:cs
        50:text/x-csrc:*.c
        10:application/x-sharedlib:*.so.[0-9]*
        """

    @Test func theHighestWeightThenTheLongestGlobWins() {
        let info = SharedMIMEInfo(globs2: Self.globs)
        #expect(info.mimeType(forFileName: "page.html") == "text/html")
        #expect(info.mimeType(forFileName: "REPORT.PDF") == "application/pdf")
        #expect(info.mimeType(forFileName: "archive.tar.gz") == "application/x-compressed-tar")
        #expect(info.mimeType(forFileName: "notes.gz") == "application/gzip")
        #expect(info.mimeType(forFileName: "Makefile") == "text/x-makefile")
        #expect(info.mimeType(forFileName: "README.md") == "text/x-readme")
        #expect(info.mimeType(forFileName: "libfoo.so.6") == "application/x-sharedlib")
        // `cs`: case matters for that glob only.
        #expect(info.mimeType(forFileName: "main.C") == "text/x-c++src")
        #expect(info.mimeType(forFileName: "main.c") == "text/x-csrc")
        #expect(info.mimeType(forFileName: "unknown.zzz") == nil)
    }

    /// A file: load answers with the type the system's database gives its name.
    @Test func aFileResponseHasItsTypeFromTheSystemDatabase() async throws {
        let path = NSTemporaryDirectory() + "keyjar-mime-\(UUID().uuidString).pdf"
        try Data("%PDF-1.4".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        #expect(SharedMIMEInfo.system.mimeType(forFileName: "x.pdf") == "application/pdf")
        let delegate = await load(URLRequest(url: URL(fileURLWithPath: path)), with: ephemeralLoader())
        let response = try #require(delegate.state.withLock { $0.responses.last })
        #expect(response.mimeType == "application/pdf")
    }
}
