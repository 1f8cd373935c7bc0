import Testing

@testable import KeyjarTransfer

/// The response-head parser on the lines libcurl hands over (each with its CRLF).
@Suite struct ResponseHeadParserTests {
    private func parse(_ lines: [String]) -> [ResponseHeadParser.Outcome] {
        var parser = ResponseHeadParser()
        return lines.map { line in
            Array((line + "\r\n").utf8).withUnsafeBufferPointer { parser.consume($0) }
        }
    }

    private func head(_ lines: [String]) throws -> ResponseHead {
        guard case .head(let head)? = parse(lines).last else { throw HeadError() }
        return head
    }

    private struct HeadError: Error {}

    @Test func fieldsKeepOrderRepeatsAndValuesWithoutOptionalWhitespace() throws {
        let parsed = try head([
            "HTTP/1.1 200 OK", "Set-Cookie: a=1", "X-Empty:", "x-spaced: \t value with  inner  spaces \t",
            "SET-COOKIE:b=2", "Non-ASCII: caf\u{e9} \u{a0}", "",
        ])
        #expect(parsed.statusCode == 200 && parsed.httpVersion == "HTTP/1.1" && parsed.reasonPhrase == "OK")
        #expect(parsed.fields.map(\.name) == ["Set-Cookie", "X-Empty", "x-spaced", "SET-COOKIE", "Non-ASCII"])
        #expect(parsed.values(of: "set-cookie") == ["a=1", "b=2"])
        #expect(parsed.value(of: "X-SPACED") == "value with  inner  spaces")
        #expect(parsed.value(of: "x-empty") == "")
        // Only spaces and tabs are optional whitespace; a no-break space is part of the value.
        #expect(parsed.value(of: "non-ascii") == "caf\u{e9} \u{a0}")
        #expect(parsed.value(of: "Set-Cooki") == nil && parsed.value(of: "Set-Cookie2") == nil)
        #expect(
            parsed.lines == [
                "HTTP/1.1 200 OK", "Set-Cookie: a=1", "X-Empty: ", "x-spaced: value with  inner  spaces",
                "SET-COOKIE: b=2", "Non-ASCII: caf\u{e9} \u{a0}",
            ]
        )
    }

    /// Foundation's dictionary: repeated fields joined under the first spelling of the name.
    @Test func theHeaderDictionaryJoinsRepeatedFieldsUnderTheirFirstName() throws {
        let parsed = try head(["HTTP/1.1 200 OK", "Vary: a", "ETag: x", "vary: b", "VARY: c", "X-One: 1", ""])
        #expect(parsed.headerDictionary == ["Vary": "a, b, c", "ETag": "x", "X-One": "1"])
        // Past 32 fields the dictionary is built another way; the outcome is the same.
        let many = try head(["HTTP/1.1 200 OK", "Vary: a"] + (0..<40).map { "F\($0): \($0)" } + ["VARY: b", ""])
        #expect(many.headerDictionary["Vary"] == "a, b" && many.headerDictionary.count == 41)
    }

    /// Only letters fold: "@" and "`" (or "[" and "{") are different names.
    @Test func fieldNamesCompareASCIICaseInsensitivelyOnLettersOnly() {
        #expect(ResponseHead.sameFieldName("Set-Cookie", "set-COOKIE"))
        #expect(!ResponseHead.sameFieldName("X@", "x`") && !ResponseHead.sameFieldName("a[", "a{"))
        #expect(!ResponseHead.sameFieldName("Cookie", "Cookie2"))
        #expect(ResponseHead.isField("accept-ENCODING: gzip", named: "Accept-Encoding"))
        #expect(!ResponseHead.isField("Accept-Encodings: gzip", named: "Accept-Encoding"))
        #expect(!ResponseHead.isField("Accept-Encoding", named: "Accept-Encoding"))
    }

    @Test func interimResponsesAreSkippedAndFoldedLinesJoined() throws {
        let parsed = try head(["HTTP/1.1 100 Continue", "", "HTTP/2 201", "X-Folded: one", "   two", "\tthree", ""])
        #expect(parsed.statusCode == 201 && parsed.httpVersion == "HTTP/2" && parsed.reasonPhrase.isEmpty)
        #expect(parsed.value(of: "x-folded") == "one two three")
    }

    @Test(arguments: ["no colon here", ": no name", "Bad Name: value"])
    func malformedFieldLinesAreErrors(_ line: String) {
        guard case .malformed(let message)? = parse(["HTTP/1.1 200 OK", line]).last else {
            Issue.record("'\(line)' was accepted")
            return
        }
        #expect(message.hasPrefix("the header line"))
    }

    /// The status line is split on bytes: the reason phrase keeps its inner spaces.
    @Test func theStatusLineSplitsIntoVersionCodeAndReason() throws {
        let parsed = try head(["HTTP/1.1 404 Not  Found here", ""])
        #expect(
            parsed.httpVersion == "HTTP/1.1" && parsed.statusCode == 404 && parsed.reasonPhrase == "Not  Found here"
        )
        guard case .malformed? = parse(["HTTP/1.1 99 Low"]).last else {
            Issue.record("a two-digit status was accepted")
            return
        }
    }

    @Test func aStatusLineThatIsNotHTTPIsAnError() {
        guard case .malformed(let message)? = parse(["HTTP/1.1 abc OK"]).last else {
            Issue.record("accepted")
            return
        }
        #expect(message.contains("is not HTTP"))
    }
}
