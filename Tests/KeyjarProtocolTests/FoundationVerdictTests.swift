import KeyjarCore
import Testing

@testable import KeyjarProtocol

/// What clients and keyjards built on Foundation's decoder sent and were answered: payloads
/// with the outcome the synthesized `Codable` conformances, which defined the format before
/// the codec, gave them (recorded from them).
struct FoundationVerdictTests {
    /// A payload decoded as each kind of message, as the test records the outcome.
    static func verdict(_ payload: String) -> (client: String, server: String) {
        func outcome<Message>(_ decode: () throws(WireError) -> Message) -> String {
            do { return "OK \(try decode())" } catch { return "ERR \(error.message)" }
        }
        let bytes = Array(payload.utf8)
        return (
            outcome { () throws(WireError) in try MessageCoding.decode(ClientMessage.self, from: bytes) },
            outcome { () throws(WireError) in try MessageCoding.decode(ServerMessage.self, from: bytes) }
        )
    }

    /// Payloads and what the synthesized `Codable` conformances, which defined the format
    /// before the codec, made of them as a client message and as a server message (recorded
    /// from them): the codec accepts the same, reads the same values, and words its errors the
    /// same way — members it does not know ignored, in any order, optional ones absent or null,
    /// integers written as `5.0` or `1e2`. The few differences are commented: all on input that
    /// both refuse, but for duplicate keys.
    @Test(arguments: [
        (
            #"{"request":{"cookieHeader":{"context":{"nonHTTP":false,"method":"GET","isTopLevelNavigation":false,"url":"u"}}},"id":5}"#,
            #"OK ClientMessage(id: 5, request: cookieHeader(context: KeyjarProtocol.WireCookieContext(url: "u", mainDocumentURL: nil, isTopLevelNavigation: false, method: "GET", nonHTTP: false)))"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #" { "id" : 5 , "request" : { "cookies" : { "context" : { "url" : "\u00e9\ud83c\udf6a\/" , "mainDocumentURL" : null , "isTopLevelNavigation" : true , "method" : "GET" , "nonHTTP" : false } } } } "#,
            #"OK ClientMessage(id: 5, request: cookies(context: KeyjarProtocol.WireCookieContext(url: "é🍪/", mainDocumentURL: nil, isTopLevelNavigation: true, method: "GET", nonHTTP: false)))"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"reply":{"id":1,"response":{"cookieHeader":{"header":null}}}}"#,
            #"ERR malformed message: missing 'id' at top level"#,
            #"OK reply(id: 1, response: cookieHeader(header: nil))"#
        ),
        (
            #"{"reply":{"id":1,"response":{"committed":{"sequence":null}}}}"#,
            #"ERR malformed message: missing 'id' at top level"#,
            #"OK reply(id: 1, response: committed(sequence: nil))"#
        ),
        (
            #"{"id":5,"extra":1,"request":{"cookieHeader":{"context":{"url":"u","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}}}}"#,
            #"OK ClientMessage(id: 5, request: cookieHeader(context: KeyjarProtocol.WireCookieContext(url: "u", mainDocumentURL: nil, isTopLevelNavigation: false, method: "GET", nonHTTP: false)))"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5.0,"request":{"cookieHeader":{"context":{"url":"u","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}}}}"#,
            #"OK ClientMessage(id: 5, request: cookieHeader(context: KeyjarProtocol.WireCookieContext(url: "u", mainDocumentURL: nil, isTopLevelNavigation: false, method: "GET", nonHTTP: false)))"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":-0,"request":{"cookieHeader":{"context":{"url":"u","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}}}}"#,
            #"OK ClientMessage(id: 0, request: cookieHeader(context: KeyjarProtocol.WireCookieContext(url: "u", mainDocumentURL: nil, isTopLevelNavigation: false, method: "GET", nonHTTP: false)))"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        // Refused alike; Foundation said "not valid JSON" for a number its field cannot hold.
        (
            #"{"id":18446744073709551616,"request":{"cookieHeader":{"context":{"url":"u","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}}}}"#,
            #"ERR malformed message: invalid value at id"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":1e2,"request":{"cookieHeader":{"context":{"url":"u","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}}}}"#,
            #"OK ClientMessage(id: 100, request: cookieHeader(context: KeyjarProtocol.WireCookieContext(url: "u", mainDocumentURL: nil, isTopLevelNavigation: false, method: "GET", nonHTTP: false)))"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":1.5,"request":{"cookieHeader":{"context":{"url":"u","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}}}}"#,
            #"ERR malformed message: invalid value at id"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":"5","request":{"cookieHeader":{"context":{"url":"u","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}}}}"#,
            #"ERR malformed message: wrong type at id"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        // A duplicate key is refused, where Foundation kept the first: no encoder writes one,
        // and readers that keep different ones would disagree on what a message means.
        (
            #"{"id":5,"id":6,"request":{"cookieHeader":{"context":{"url":"u","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}}}}"#,
            #"ERR malformed message: not valid JSON"#,
            #"ERR malformed message: not valid JSON"#
        ),
        (
            #"{"id":5,"request":{"cookieHeader":{"context":{"url":"\ud800","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}}}}"#,
            #"ERR malformed message: not valid JSON"#,
            #"ERR malformed message: not valid JSON"#
        ),
        (
            #"{"id":5,"request":{"cookieHeader":{"context":{"url":"\x","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}}}}"#,
            #"ERR malformed message: not valid JSON"#,
            #"ERR malformed message: not valid JSON"#
        ),
        (
            #"{"id":5,"request":{"cookieHeader":{"context":{"url":1,"isTopLevelNavigation":false,"method":"GET","nonHTTP":false}}}}"#,
            #"ERR malformed message: wrong type at request.cookieHeader.context.url"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"cookieHeader":{"context":{"url":"u","isTopLevelNavigation":0,"method":"GET","nonHTTP":false}}}}"#,
            #"ERR malformed message: wrong type at request.cookieHeader.context.isTopLevelNavigation"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"cookieHeader":{"context":{"url":"u","method":"GET","nonHTTP":false}}}}"#,
            #"ERR malformed message: missing 'isTopLevelNavigation' at request.cookieHeader.context"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"importCookies":{"format":"yaml","text":"a"}}}"#,
            #"ERR malformed message: invalid value at request.importCookies.format"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"importCookies":{"format":"json","text":"a","extra":true}}}"#,
            #"OK ClientMessage(id: 5, request: importCookies(format: KeyjarCodec.CookieFileFormat.json, text: "a", firstLine: nil))"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"importCookies":{"text":"a\tb\u0000","format":"netscape"}}}"#,
            #"OK ClientMessage(id: 5, request: importCookies(format: KeyjarCodec.CookieFileFormat.netscape, text: "a\tb\0", firstLine: nil))"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"cookieHeader":{"context":{"url":"u","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}},"status":{}}}"#,
            #"ERR malformed message: wrong type at request"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"cookieHeader":{"context":{"url":"u","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}},"other":{}}}"#,
            #"OK ClientMessage(id: 5, request: cookieHeader(context: KeyjarProtocol.WireCookieContext(url: "u", mainDocumentURL: nil, isTopLevelNavigation: false, method: "GET", nonHTTP: false)))"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"status":{"x":1}}}"#,
            #"OK ClientMessage(id: 5, request: request)"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"status":[]}}"#,
            #"ERR malformed message: wrong type at request.status"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"status":null}}"#,
            #"ERR malformed message: wrong type at request.status"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{}}"#,
            #"ERR malformed message: wrong type at request"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"subscribe":{"after":null}}}"#,
            #"OK ClientMessage(id: 5, request: subscribe(after: nil))"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"setCookies":{"context":{"url":"u","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}}}}"#,
            #"ERR malformed message: missing 'headers' at request.setCookies"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"setCookies":{"headers":["a",null],"context":{"url":"u","isTopLevelNavigation":false,"method":"GET","nonHTTP":false}}}}"#,
            #"ERR malformed message: wrong type at request.setCookies.headers.Index 1"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"insertCookies":{"cookies":[{"value":"v","domain":"d","hostOnly":true,"path":"/","secure":false,"httpOnly":false,"sameSite":"Lax","creation":0,"lastAccess":0}]}}}"#,
            #"ERR malformed message: missing 'name' at request.insertCookies.cookies.Index 0"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"insertCookies":{"cookies":[{"name":"n","value":"v","domain":"d","hostOnly":true,"path":"/","expires":null,"secure":false,"httpOnly":false,"sameSite":"Lax","creation":0,"lastAccess":0,"extra":[1]}]}}}"#,
            #"OK ClientMessage(id: 5, request: insertCookies(cookies: [n=v; domain=d; path=/; session; samesite=Lax]))"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"setCredential":{"space":{"host":"Example.COM","port":0,"protocol":"HTTPS","realm":"","authenticationMethod":"default","proxyType":"none"},"user":"u","password":"p","makeDefault":false}}}"#,
            #"OK ClientMessage(id: 5, request: setCredential(space: ProtectionSpace(host: "Example.COM", port: 0, protocol: "HTTPS", realm: Optional(""), authenticationMethod: KeyjarCore.ProtectionSpace.AuthenticationMethod.default, proxyType: KeyjarCore.ProtectionSpace.ProxyType.none), user: u, password: <hidden>, makeDefault: false))"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"setCredential":{"space":{"host":"h","port":1,"protocol":"https","authenticationMethod":"default","proxyType":"none"},"user":"u","password":"p","makeDefault":"no"}}}"#,
            #"ERR malformed message: wrong type at request.setCredential.makeDefault"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"id":5,"request":{"setPolicy":{"policy":{"acceptPolicy":"never","domainRules":{"a":"block","b":"nope"}}}}}"#,
            #"ERR malformed message: invalid value at request.setPolicy.policy.domainRules.b"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"{"reply":{"id":1,"response":{"cookies":{"cookies":[{"name":"n","value":"v","domain":"d","hostOnly":true,"path":"/","secure":false,"httpOnly":false,"sameSite":"Lax","creation":1e400,"lastAccess":0}]}}}}"#,
            #"ERR malformed message: missing 'id' at top level"#,
            #"ERR malformed message: invalid value at reply.response.cookies.cookies.Index 0.creation"#
        ),
        (
            #"{"reply":{"id":1,"response":{"cookies":{"cookies":[{"name":"n","value":"v","domain":"d","hostOnly":true,"path":"/","secure":false,"httpOnly":false,"sameSite":"lax","creation":0,"lastAccess":0}]}}}}"#,
            #"ERR malformed message: missing 'id' at top level"#,
            #"ERR malformed message: invalid value at reply.response.cookies.cookies.Index 0.sameSite"#
        ),
        (
            #"{"reply":{"id":1,"response":{"cookieOutcomes":{"outcomes":[null,1]}}}}"#,
            #"ERR malformed message: missing 'id' at top level"#,
            #"ERR malformed message: wrong type at reply.response.cookieOutcomes.outcomes.Index 1"#
        ),
        (
            #"{"reply":{"id":1,"response":{"importReport":{"imported":1,"expired":0,"problems":[{"line":1}]}}}}"#,
            #"ERR malformed message: missing 'id' at top level"#,
            #"ERR malformed message: missing 'message' at reply.response.importReport.problems.Index 0"#
        ),
        (
            #"{"failure":{"error":{"code":70000,"message":"m"}}}"#,
            #"ERR malformed message: missing 'id' at top level"#,
            #"ERR malformed message: invalid value at failure.error.code"#
        ),
        (
            #"{"failure":{"id":null,"error":{"code":3,"message":"m"}}}"#,
            #"ERR malformed message: missing 'id' at top level"#,
            #"OK failure(id: nil, error: m (keyjar error 3))"#
        ),
        (
            #"{"event":{"event":{"sequence":1,"event":{"cookies":{"changes":[{"kind":"moved","cookie":{}}]}}}}}"#,
            #"ERR malformed message: missing 'id' at top level"#,
            #"ERR malformed message: missing 'name' at event.event.event.cookies.changes.Index 0.cookie"#
        ),
        (
            #"{"event":{"event":{"sequence":1,"event":{"cookies":{"changes":[{"kind":"moved","cookie":{"name":"n","value":"v","domain":"d","hostOnly":true,"path":"/","secure":false,"httpOnly":false,"sameSite":"Lax","creation":0,"lastAccess":0}}]}}}}}"#,
            #"ERR malformed message: missing 'id' at top level"#,
            #"ERR malformed message: invalid value at event.event.event.cookies.changes.Index 0.kind"#
        ),
        (
            #"{"event":{"event":{"sequence":1,"event":{"credentials":{"changes":[{"kind":"added","space":{"host":"h","port":1,"protocol":"https","authenticationMethod":"default","proxyType":"none"}}]}}}}}"#,
            #"ERR malformed message: missing 'id' at top level"#,
            #"ERR malformed message: missing 'user' at event.event.event.credentials.changes.Index 0"#
        ),
        (
            #"{"reply":{"id":1,"response":{"ok":{}}}} x"#,
            #"ERR malformed message: not valid JSON"#,
            #"ERR malformed message: not valid JSON"#
        ),
        (
            #"{"reply":{"id":1,"response":{"ok":{}}}"#,
            #"ERR malformed message: not valid JSON"#,
            #"ERR malformed message: not valid JSON"#
        ),
        (
            #""#,
            #"ERR malformed message: not valid JSON"#,
            #"ERR malformed message: not valid JSON"#
        ),
        (
            #"null"#,
            #"ERR malformed message: wrong type at top level"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        (
            #"[]"#,
            #"ERR malformed message: wrong type at top level"#,
            #"ERR malformed message: wrong type at top level"#
        ),
        // JSON text has no byte order mark (RFC 8259 §8.1), and Foundation's encoder never wrote one.
        (
            "\u{FEFF}{}",
            #"ERR malformed message: not valid JSON"#,
            #"ERR malformed message: not valid JSON"#
        ),
        (
            #"{"reply":{"id":1,"response":{"ok":{}}}}"#,
            #"ERR malformed message: missing 'id' at top level"#,
            #"OK reply(id: 1, response: response)"#
        ),
    ])
    func theCodecReadsWhatFoundationsDecoderRead(_ payload: String, _ client: String, _ server: String) {
        let verdict = Self.verdict(payload)
        #expect(verdict.client == client, "as a client message: \(payload)")
        #expect(verdict.server == server, "as a server message: \(payload)")
    }
}
