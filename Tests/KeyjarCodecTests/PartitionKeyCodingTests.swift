import Foundation
import KeyjarCodec
import KeyjarCore
import Testing

/// A partitioned cookie's key in every format that carries cookies: written only when there is
/// one, read back exactly, and a value that is no partition key refused rather than read as an
/// unpartitioned cookie (which would go to every site).
struct PartitionKeyCodingTests {
    static let key = CookiePartitionKey(scheme: "https", site: "news.example")
    static let cookie = Cookie(
        name: "id",
        value: "1",
        domain: "chat.example",
        hostOnly: true,
        secure: true,
        sameSite: .none,
        creation: Date(timeIntervalSince1970: 1_700_000_000),
        partitionKey: key
    )

    @Test func theJSONFileKeepsThePartitionKey() throws {
        var plain = Self.cookie
        plain.partitionKey = nil
        let file = CookieJSONFile.serialize([Self.cookie, plain])
        let text = String(decoding: file, as: UTF8.self)
        #expect(text.components(separatedBy: "\"partitionKey\"").count == 2, "written for the partitioned cookie only")
        let parsed = CookieJSONFile.parse(file)
        #expect(parsed.problems.isEmpty)
        #expect(parsed.cookies.map(\.cookie.partitionKey) == [Self.key, nil])
    }

    @Test(arguments: [
        #""partitionKey":"news.example""#, #""partitionKey":"https://news.example/x""#, #""partitionKey":7"#,
    ])
    func aFileEntryWithABadKeyIsAProblemNotAnUnpartitionedCookie(member: String) {
        let file = Data((#"[{"name":"id","value":"1","domain":"chat.example","secure":true,"# + member + "}]").utf8)
        let parsed = CookieJSONFile.parse(file)
        #expect(parsed.cookies.isEmpty)
        let messages = parsed.problems.map { $0.message }
        #expect(
            messages == ["field 'partitionKey' is invalid"] || messages == ["field 'partitionKey' has the wrong type"]
        )
    }

    @Test func theWireIdentityCarriesTheKey() throws {
        var writer = JSONWriter()
        writer.write(Self.cookie.identity)
        let json = try #require(JSONReader.parse(writer.bytes))
        #expect(try Cookie.Identity(json: json) == Self.cookie.identity)
        var plain = Self.cookie.identity
        plain.partitionKey = nil
        var plainWriter = JSONWriter()
        plainWriter.write(plain)
        #expect(!plainWriter.output.contains("partitionKey"))
    }

    @Test func theCanonicalReaderRefusesABadKeyAndTheTreeReaderSaysWhich() throws {
        var writer = JSONWriter()
        writer.write(Self.cookie)
        let bad = writer.output.replacingOccurrences(of: "https://news.example", with: "https://news.example:443")
        let bytes = Array(bad.utf8)
        let canonical = bytes.withUnsafeBufferPointer { buffer -> Cookie? in
            var reader = JSONReader(bytes: buffer)
            return Cookie(canonical: &reader)
        }
        #expect(canonical == nil)
        let json = try #require(JSONReader.parse(bytes))
        #expect(throws: JSONShapeError.self) { try Cookie(json: json) }
    }
}
