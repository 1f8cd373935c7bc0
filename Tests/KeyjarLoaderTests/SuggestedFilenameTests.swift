import Foundation
import KeyjarTestSupport
import Testing

@testable import KeyjarLoader

/// RFC 6266 file names (the test cases of its appendix and greenbytes' suite in spirit) and the
/// order a download's name is chosen in.
struct SuggestedFilenameTests {
    @Test(arguments: [
        ("attachment; filename=\"report.pdf\"", "report.pdf"),
        ("attachment; filename=report.pdf", "report.pdf"),
        ("ATTACHMENT; FILENAME=report.pdf", "report.pdf"),
        ("attachment; filename=\"a \\\"quoted\\\" name.txt\"", "a \"quoted\" name.txt"),
        ("attachment; filename*=UTF-8''%E2%82%AC%20rates.txt", "€ rates.txt"),
        ("attachment; filename*=iso-8859-1'en'%A3%20rates.txt", "£ rates.txt"),
        // filename* wins whatever the order.
        ("attachment; filename=\"EURO rates\"; filename*=utf-8''%e2%82%ac%20rates", "€ rates"),
        ("attachment; filename*=utf-8''%e2%82%ac%20rates; filename=\"EURO rates\"", "€ rates"),
        // An undecodable filename* falls back to filename.
        ("attachment; filename*=UTF-8''%ZZ; filename=plain.txt", "plain.txt"),
        ("attachment; filename*=UTF-8''a%+1b; filename=plain.txt", "plain.txt"),
        ("attachment; filename*=UTF-8''a%4; filename=plain.txt", "plain.txt"),
        ("attachment; filename*=koi8-r''%C1; filename=plain.txt", "plain.txt"),
        ("inline; filename=page.html", "page.html"),
        // Unknown parameters and junk are skipped.
        ("attachment; foo=bar; ;filename=x.bin; size=3", "x.bin"),
    ])
    func fileNamesAreRead(field: String, expected: String) {
        #expect(ContentDisposition(field)?.filename == expected, "\(field)")
    }

    @Test func theTypeIsLowercasedAndAnEmptyFieldHasNone() {
        #expect(ContentDisposition("Attachment")?.type == "attachment")
        #expect(ContentDisposition("Attachment")?.filename == nil)
        #expect(ContentDisposition("") == nil)
        #expect(ContentDisposition("; filename=x") == nil)
    }

    @Test func namesAreMadeSafe() {
        #expect(SuggestedFilename.sanitize("../../etc/passwd") == "passwd")
        #expect(SuggestedFilename.sanitize("C:\\Windows\\evil.exe") == "evil.exe")
        #expect(SuggestedFilename.sanitize(".bashrc") == "bashrc")
        #expect(SuggestedFilename.sanitize("a\u{0}b\nc.txt") == "abc.txt")
        // C1 controls (CSI) and bidirectional overrides too: "invoice\u{202E}fdp.exe" reads as
        // "invoiceexe.pdf" on a screen.
        #expect(SuggestedFilename.sanitize("invoice\u{202E}fdp.exe") == "invoicefdp.exe")
        #expect(SuggestedFilename.sanitize("a\u{9B}31m\u{2066}b\u{200F}.txt") == "a31mb.txt")
        // Never one of the files Keyjar keeps beside a download, in any case.
        #expect(SuggestedFilename.sanitize("report.pdf.keyjar-part") == "report.pdf_keyjar-part")
        #expect(SuggestedFilename.sanitize("a.KEYJAR-resume.new") == "a_KEYJAR-resume.new")
        #expect(SuggestedFilename.avoidingKeyjarFiles("x.keyjar-decoded.keyjar-part") == "x_keyjar-decoded_keyjar-part")
        #expect(SuggestedFilename.avoidingKeyjarFiles("keyjar-notes.txt") == "keyjar-notes.txt")
        #expect(SuggestedFilename.sanitize("..") == nil)
        #expect(SuggestedFilename.sanitize("   ") == nil)
        let long = String(repeating: "é", count: 200) + ".pdf"
        let safe = SuggestedFilename.sanitize(long)
        #expect(safe.map { $0.utf8.count <= SuggestedFilename.maximumBytes && $0.hasSuffix(".pdf") } == true)
    }

    /// Found by the content-disposition fuzz target (Fuzz/Corpus/content-disposition/
    /// combining-after-slash): a combining mark after a slash or a dot makes one Character of
    /// them ("/᫫"), which a split by Character does not take for a slash.
    @Test func aCombiningMarkNeverHidesASlashOrALeadingDot() throws {
        #expect(SuggestedFilename.sanitize("../\u{1AEB}../etc/pass\u{301}wd") == "pass\u{301}wd")
        #expect(SuggestedFilename.sanitize("a/\u{301}b") == "\u{301}b")
        #expect(SuggestedFilename.sanitize("x\\\u{301}y") == "\u{301}y")
        #expect(SuggestedFilename.sanitize(".\u{301}hidden") == "\u{301}hidden")
        #expect(SuggestedFilename.sanitize("/\u{1AEB}") == "\u{1AEB}")
        // From a URL's path too: the fuzz input's URL, whose last component began with "/᫫".
        let url = try #require(URL(string: "http://example.com/a/%E1%AB%AB%EF%BF%BDb"))
        let name = SuggestedFilename.name(contentDisposition: "i", url: url)
        #expect(!name.unicodeScalars.contains("/") && name == "\u{1AEB}\u{FFFD}b")
        let deeper = try #require(URL(string: "http://example.com/a/%E1%AB%AB/b%CC%81"))
        #expect(SuggestedFilename.name(contentDisposition: nil, url: deeper) == "b\u{301}")
        // One Character longer than the limit before its extension is cut inside, not dropped
        // whole (which would leave ".txt", a hidden name).
        let huge = "a" + String(repeating: "\u{301}", count: 300) + ".txt"
        let cut = try #require(SuggestedFilename.sanitize(huge))
        #expect(
            cut.utf8.count <= SuggestedFilename.maximumBytes && cut.hasSuffix(".txt") && cut.unicodeScalars.first == "a"
        )
        let hugeExtension = "a." + String(repeating: "\u{301}", count: 300)
        let first = try #require(SuggestedFilename.sanitize(hugeExtension))
        #expect(first.utf8.count <= SuggestedFilename.maximumBytes && first.unicodeScalars.first == "a")
    }

    @Test func theNameComesFromTheFieldThenTheURLThenIndexHTML() throws {
        let url = try #require(URL(string: "https://example.com/files/q3%20report.pdf?x=1"))
        #expect(
            SuggestedFilename.name(contentDisposition: "attachment; filename=\"given.pdf\"", url: url) == "given.pdf"
        )
        #expect(SuggestedFilename.name(contentDisposition: "attachment", url: url) == "q3 report.pdf")
        #expect(SuggestedFilename.name(contentDisposition: "attachment; filename=\"..\"", url: url) == "q3 report.pdf")
        #expect(
            SuggestedFilename.name(contentDisposition: nil, url: URL(string: "https://example.com/")) == "index.html"
        )
        #expect(SuggestedFilename.name(contentDisposition: nil, url: nil) == "index.html")
    }

    /// Mutated fields never crash the reader, and whatever name comes out is safe: one path
    /// component, no control character, no leading dot, at most `maximumBytes`.
    @Test(arguments: 0..<3 as Range<UInt64>)
    func mutatedFieldsAlwaysGiveASafeName(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        let seeds = [
            "attachment; filename=\"report.pdf\"; filename*=UTF-8''%E2%82%AC%20rates.txt",
            "inline; filename=../../x; filename*=iso-8859-1'en'%A3",
        ]
        let url = try #require(URL(string: "https://example.com/a/b.txt"))
        for iteration in 0..<3_000 {
            let field = Mutation.mutate(seeds[iteration % seeds.count], using: &random)
            let name = SuggestedFilename.name(contentDisposition: field, url: url)
            #expect(
                !name.isEmpty && !name.contains("/") && !name.hasPrefix(".")
                    && name.utf8.count <= SuggestedFilename.maximumBytes,
                "\(field)"
            )
            #expect(!name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }, "\(field)")
        }
    }

    @Test func uniqueNamesCountUpBeforeTheExtension() {
        var taken: Set<String> = ["report.pdf", "report-1.pdf", "archive.tar.gz", "README"]
        #expect(SuggestedFilename.unique("report.pdf") { taken.contains($0) } == "report-2.pdf")
        #expect(SuggestedFilename.unique("archive.tar.gz") { taken.contains($0) } == "archive-1.tar.gz")
        #expect(SuggestedFilename.unique("README") { taken.contains($0) } == "README-1")
        #expect(SuggestedFilename.unique("new.txt") { taken.contains($0) } == "new.txt")
        taken.insert("x.y.z")
        #expect(SuggestedFilename.unique("x.y.z") { taken.contains($0) } == "x.y-1.z")
    }
}
