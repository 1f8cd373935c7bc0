import Foundation
import KeyjarCodec
import KeyjarCore
import KeyjarTestSupport
import Testing

@testable import KeyjarProtocol

/// The codec on many messages, on what clients built on Foundation's decoder sent and were
/// answered, and on mutated payloads. Tests/KeyjarProtocolTests/GoldenTests.swift checks it
/// against the golden messages and the schema.
@Suite struct MessageCodingTests {
    // MARK: Samples

    /// Strings that stress escaping: quotes, backslashes, controls, non-ASCII, astral plane.
    static let awkward = [
        "", "plain", "quote \" and \\ backslash", "tab\tnew\nline\r\u{1}\u{1f}", "é ü 中文", "emoji 🍪", "</script>",
        "\u{7f}",
    ]

    /// Times are whole or binary fractions of seconds: a Date is kept relative to 2001 and
    /// travels relative to 1970, so "now" may not survive any JSON round trip to the last bit.
    static let cookies: [Cookie] = {
        var cookies = [
            Cookie(name: "n", value: "v", domain: "example.com", creation: Date(timeIntervalSince1970: 1_600_000_000)),
            Cookie(
                name: "session",
                value: "a=b; c",
                domain: "www.example.co.uk",
                hostOnly: false,
                path: "/a/b",
                expires: Date(timeIntervalSince1970: 1_900_000_000.125),
                secure: true,
                httpOnly: true,
                sameSite: .strict,
                creation: Date(timeIntervalSince1970: 1_700_000_000.5),
                lastAccess: Date(timeIntervalSince1970: 1_700_000_001.0625)
            ),
            Cookie(
                name: "",
                value: "",
                domain: "xn--bcher-kva.example",
                sameSite: .none,
                creation: Date(timeIntervalSince1970: 0)
            ),
        ]
        for (index, text) in awkward.enumerated() {
            cookies.append(
                Cookie(
                    name: "k\(index)",
                    value: text,
                    domain: "e.example",
                    path: "/" + text,
                    sameSite: SameSite.allCases[index % 4],
                    creation: Date(timeIntervalSince1970: Double(index) * 1e9 + 0.25)
                )
            )
        }
        return cookies
    }()

    static let contexts: [WireCookieContext] =
        [
            WireCookieContext(url: "https://www.example.com/a?b=c"),
            WireCookieContext(
                url: "http://[::1]:8080/",
                mainDocumentURL: "https://top.example/",
                isTopLevelNavigation: true,
                method: "POST",
                nonHTTP: true
            ),
        ] + awkward.map { WireCookieContext(url: $0, mainDocumentURL: $0) }

    static let clientMessages: [ClientMessage] = {
        var messages: [ClientMessage] = []
        for (index, context) in contexts.enumerated() {
            let id = [0, 1, UInt64(Int64.max), UInt64.max][index % 4]
            messages.append(ClientMessage(id: id, request: .setCookies(headers: awkward, context: context)))
            messages.append(ClientMessage(id: id, request: .setCookies(headers: [], context: context)))
            messages.append(ClientMessage(id: id, request: .cookieHeader(context: context)))
            messages.append(ClientMessage(id: id, request: .cookies(context: context)))
        }
        messages.append(ClientMessage(id: 7, request: .insertCookies(cookies: cookies)))
        messages.append(ClientMessage(id: 8, request: .insertCookies(cookies: [])))
        messages.append(ClientMessage(id: 9, request: .importCookies(format: .netscape, text: "")))
        messages.append(
            ClientMessage(
                id: 10,
                request: .importCookies(
                    format: .netscape,
                    text: ".a.example\tTRUE\t/\tFALSE\t0\tn\tv\r\n#HttpOnly_b.example\tFALSE\t/\tTRUE\t9\tk\t\"x\\y\"\n"
                )
            )
        )
        messages.append(
            ClientMessage(id: 11, request: .importCookies(format: .json, text: awkward.joined(separator: "\n")))
        )
        let spaces = [
            ProtectionSpace(host: "example.com", protocol: "https"),
            ProtectionSpace(
                host: "::1",
                port: 8443,
                protocol: "https",
                realm: "r \"q\" é/",
                authenticationMethod: .httpDigest
            ),
            ProtectionSpace(
                host: "proxy.example",
                port: 3128,
                protocol: "http",
                realm: "",
                authenticationMethod: .httpBasic,
                proxyType: .http
            ),
        ]
        for (index, space) in spaces.enumerated() {
            for text in awkward.prefix(3) {
                messages.append(
                    ClientMessage(
                        id: UInt64(20 + index),
                        request: .setCredential(space: space, user: text, password: text, makeDefault: index == 1)
                    )
                )
                messages.append(ClientMessage(id: UInt64(30 + index), request: .password(space: space, user: text)))
            }
            messages.append(ClientMessage(id: UInt64(40 + index), request: .credentialChoice(space: space)))
        }
        for text in awkward.prefix(3) {
            messages.append(ClientMessage(id: 0, request: .hello(version: 1, client: text)))
        }
        messages.append(ClientMessage(id: 50, request: .follow(after: 0)))
        messages.append(ClientMessage(id: 51, request: .follow(after: UInt64.max)))
        return messages
    }()

    static let otherClientMessages: [ClientMessage] = [
        ClientMessage(id: 2, request: .status),
        ClientMessage(id: 3, request: .subscribe(after: 9)), ClientMessage(id: 4, request: .listCookies(domain: nil)),
    ]

    static let changes: [CookieChange] = cookies.enumerated().map { index, cookie in
        switch index % 3 {
        case 0: .added(cookie)
        case 1: .replaced(old: cookies[0], new: cookie)
        default: .removed(cookie, cause: [.deleted, .expired, .evicted, .sessionEnded][index % 4])
        }
    }

    static let serverMessages: [ServerMessage] =
        [
            .reply(id: 0, response: .ok), .reply(id: UInt64.max, response: .committed(sequence: nil)),
            .reply(id: 3, response: .committed(sequence: UInt64.max)),
            .reply(id: 11, response: .subscribed(sequence: 0)),
            .reply(id: 12, response: .subscribed(sequence: UInt64.max)),
            .reply(id: 4, response: .cookieHeader(header: nil)),
            .reply(id: 5, response: .cookieOutcomes(outcomes: [], sequence: nil)),
            .reply(
                id: 6,
                response: .cookieOutcomes(outcomes: [nil, "refused: \"Domain\" is a public suffix", nil], sequence: 12)
            ),
            .reply(id: 7, response: .cookies(cookies: cookies)), .reply(id: 8, response: .cookies(cookies: [])),
            .event(event: SequencedEvent(sequence: 1, event: .cookies(changes: changes))),
            .event(event: SequencedEvent(sequence: UInt64.max, event: .cookies(changes: []))),
            .reply(id: 10, response: .snapshot(snapshot: snapshot)),
            .snapshot(snapshot: snapshot),
            .snapshot(snapshot: StoreSnapshot(cookies: [], policy: CookiePolicy(), credentials: [], sequence: 0)),
            .reply(id: 11, response: .password(password: nil)),
            .reply(id: 0, response: .hello(version: 1, server: "keyjard 0.1.0", sequence: 0)),
            .reply(id: 0, response: .hello(version: Int(Int32.max), server: "", sequence: UInt64.max)),
        ] + awkward.map { .reply(id: 9, response: .cookieHeader(header: $0)) }
        + awkward.map { .reply(id: 12, response: .password(password: $0)) }

    static let snapshot = StoreSnapshot(
        cookies: cookies,
        policy: CookiePolicy(
            acceptPolicy: .onlyFromMainDocumentDomain,
            domainRules: ["ads.example": .block, "é.example": .sessionOnly]
        ),
        credentials: [
            CredentialRecord(
                space: ProtectionSpace(
                    host: "example.com",
                    port: 8443,
                    protocol: "https",
                    realm: "r \"q\"",
                    authenticationMethod: .httpDigest
                ),
                user: "ålice",
                persistence: .permanent,
                isDefault: true,
                created: 1_700_000_000.5,
                lastUsed: 1_700_000_100
            ),
            CredentialRecord(
                space: ProtectionSpace(
                    host: "proxy.example",
                    protocol: "http",
                    realm: nil,
                    authenticationMethod: .httpBasic,
                    proxyType: .http
                ),
                user: "bob",
                persistence: .permanent,
                isDefault: false,
                created: 0
            ),
        ],
        sequence: 42
    )

    static let otherServerMessages: [ServerMessage] = [
        .failure(id: 1, error: WireError(code: WireError.malformedMessage, message: "bad")),
        .event(
            event: SequencedEvent(
                sequence: 2,
                event: .policy(policy: CookiePolicy(acceptPolicy: .never, domainRules: [:]))
            )
        ),
        .reply(
            id: 3,
            response: .status(
                status: ServiceStatus(
                    version: "1",
                    protocolVersion: 1,
                    pid: 7,
                    socketPath: "/s",
                    databasePath: "/d",
                    schemaVersion: 1,
                    cookieCount: 0,
                    credentialCount: 0,
                    sequence: 0,
                    secretsBackend: "file",
                    secretsHealthy: true,
                    secretsDetail: "",
                    acceptPolicy: .always,
                    connectedClients: 1
                )
            )
        ),
    ]

    // MARK: Round trips

    static let allClientMessages = clientMessages + otherClientMessages
    static let allServerMessages = serverMessages + otherServerMessages

    @Test func everyMessageIsReadBackEqual() throws {
        for message in Self.allClientMessages {
            let payload = MessageCoding.encode(message)
            #expect(try MessageCoding.decode(ClientMessage.self, from: payload) == message)
            // Through a sequence without contiguous storage too (the copy is wiped).
            #expect(try MessageCoding.decode(ClientMessage.self, from: payload.lazy.map { $0 }) == message)
        }
        for message in Self.allServerMessages {
            let payload = MessageCoding.encode(message)
            #expect(try MessageCoding.decode(ServerMessage.self, from: payload) == message)
            #expect(JSONReader.parse(payload).map { try? ServerMessage(json: $0) } == message)
            // Pushed cookie events are also read straight from keyjard's layout, without a tree.
            let canonical = payload.withUnsafeBufferPointer(ServerMessage.init(canonicalEvent:))
            if case .event(let event) = message, case .cookies = event.event {
                #expect(canonical == message)
            } else {
                #expect(canonical == nil)
            }
        }
    }

    @Test func aStoredEventIsPushedAsTheCodecWritesIt() {
        for case .event(let event) in Self.allServerMessages {
            let payload = MessageCoding.eventPayload(
                sequence: event.sequence,
                eventJSON: StoreEventJSON.encode(event.event)
            )
            #expect(Array(payload.utf8) == MessageCoding.encode(ServerMessage.event(event: event)))
        }
    }

    // MARK: Errors

    @Test func errorsNameTheFieldAndNeverAPassword() throws {
        let secret = "pw-\(UInt64.random(in: 1_000_000...9_999_999))"
        let space = #"{"host":"h","port":443,"protocol":"https","authenticationMethod":"default","proxyType":"none"}"#
        for (payload, expected) in [
            (
                #"{"id":1,"request":{"setCredential":{"space":\#(space),"user":"u","password":"\#(secret)","makeDefault":1}}}"#,
                "wrong type at request.setCredential.makeDefault"
            ),
            (
                #"{"id":1,"request":{"setCredential":{"space":\#(space),"user":"u","password":"\#(secret)"}}}"#,
                "missing 'makeDefault' at request.setCredential"
            ),
            (
                #"{"id":1,"request":{"setCredential":{"space":{"host":"h"},"user":"u","password":"\#(secret)","makeDefault":true}}}"#,
                "missing 'port' at request.setCredential.space"
            ),
            (
                #"{"id":1,"request":{"setCredential":{"space":\#(space),"user":"u","password":"\#(secret)","makeDefault":true}}"#,
                "not valid JSON"
            ),
        ] {
            do {
                let message = try MessageCoding.decode(ClientMessage.self, from: Array(payload.utf8))
                Issue.record("decoded \(message)")
            } catch {
                #expect(error.code == WireError.malformedMessage)
                #expect(error.message == "malformed message: \(expected)")
                #expect(!error.description.contains(secret))
            }
        }
    }

    // MARK: Mutated payloads

    /// Bytes that change a payload's structure or meaning rather than only a string's content.
    static let interesting = Array(#"{}[]",:\0123456789.-+eEtrufalsn "#.utf8) + [0x00, 0x1f, 0x7f, 0xc3, 0xa9, 0xff]

    /// One to three random replacements, insertions or removals of an interesting byte.
    static func mutate(_ payload: inout [UInt8], _ generator: inout SplitMix64) {
        for _ in 0...(generator.next() % 3) where !payload.isEmpty {
            let position = Int(generator.next() % UInt64(payload.count))
            let byte = interesting[Int(generator.next() % UInt64(interesting.count))]
            switch generator.next() % 3 {
            case 0: payload[position] = byte
            case 1: payload.insert(byte, at: position)
            default: payload.remove(at: position)
            }
        }
    }

    /// Whatever a mutated payload decodes to is written and read back to the same value, and
    /// written again to the same bytes; nothing crashes.
    @Test func mutatedPayloadsDecodeToValuesThatRoundTrip() throws {
        var generator = SplitMix64(seed: 0x6b65_796a_6172)
        let seeds =
            Self.clientMessages.map { MessageCoding.encode($0) } + Self.serverMessages.map { MessageCoding.encode($0) }
            + GoldenSample.all.map { GoldenTests.encode($0.sample) }
        var accepted = 0
        for round in 0..<6_000 {
            var payload = seeds[round % seeds.count]
            Self.mutate(&payload, &generator)
            let text = String(decoding: payload, as: UTF8.self)
            if let message = try? MessageCoding.decode(ClientMessage.self, from: payload) {
                accepted += 1
                let written = MessageCoding.encode(message)
                #expect(try MessageCoding.decode(ClientMessage.self, from: written) == message, "\(text)")
                #expect(MessageCoding.encode(try MessageCoding.decode(ClientMessage.self, from: written)) == written)
            }
            if let message = try? MessageCoding.decode(ServerMessage.self, from: payload) {
                accepted += 1
                let written = MessageCoding.encode(message)
                #expect(try MessageCoding.decode(ServerMessage.self, from: written) == message, "\(text)")
                #expect(MessageCoding.encode(try MessageCoding.decode(ServerMessage.self, from: written)) == written)
            }
        }
        // Mutations that keep the payload a message (a string's content, a digit) are read.
        #expect(accepted > 300)
    }

    @Test func theCanonicalEventReaderNeverDisagreesWithTheTreeOnMutatedEvents() {
        var generator = SplitMix64(seed: 0x6576_656e_74)
        let seeds = Self.serverMessages.filter { if case .event = $0 { true } else { false } }.map {
            MessageCoding.encode($0)
        }
        var canonicalAccepted = 0
        for round in 0..<4_000 {
            var payload = seeds[round % seeds.count]
            Self.mutate(&payload, &generator)
            guard let canonical = payload.withUnsafeBufferPointer(ServerMessage.init(canonicalEvent:)) else { continue }
            canonicalAccepted += 1
            // Whatever it accepts, the tree reader reads the same.
            #expect(
                JSONReader.parse(payload).map { try? ServerMessage(json: $0) } == canonical,
                "\(String(decoding: payload, as: UTF8.self))"
            )
        }
        #expect(canonicalAccepted > 100)
    }

    // MARK: The reader alone

    @Test(arguments: [
        "{", "}", "[1,]", "[,1]", #"{"a":1,}"#, #"{"a" 1}"#, #"{a:1}"#, "01", "1.", ".5", "-", "+1", "1e", "0x10",
        "NaN", "Infinity",
        "tru", "nul", #""\u12""#, #""\ud800""#, #""\udc00\ud800""#, "\"tab\there\"", "\"\u{0}\"", #"{"a":1,"a":2}"#,
        "1 2",
        String(repeating: "[", count: 65) + String(repeating: "]", count: 65),
    ])
    func readerRefusesWhatRFC8259Refuses(_ text: String) {
        #expect(JSONReader.parse(Array(text.utf8)) == nil)
    }

    /// Objects of any size are read in linear time (no test of time: a quadratic check would
    /// take minutes here, past the suite's hang limit), duplicates found wherever they are, and
    /// more members than `maximumMembers` refused.
    @Test func largeObjectsAreReadWholeAndTheirDuplicatesFound() throws {
        func object(_ keys: some Sequence<String>) -> [UInt8] {
            Array(("{" + keys.map { "\"\($0)\":0" }.joined(separator: ",") + "}").utf8)
        }
        let keys = (0..<200_000).map { "k\($0)" }
        guard case .object(let members) = try #require(JSONReader.parse(object(keys))) else {
            Issue.record("not an object")
            return
        }
        #expect(members.count == 200_000 && members.last?.key == "k199999")
        // A duplicate among the first keys, across the switch to a set, and at the very end
        let some = keys[..<20_000]
        for duplicate in [keys[3], keys[15], keys[16], keys[19_999]] {
            #expect(JSONReader.parse(object(some + [duplicate])) == nil, "\(duplicate)")
        }
        #expect(JSONReader.parse(object(keys[..<15] + [keys[2]])) == nil)
        let most = JSONReader.maximumMembers
        #expect(JSONReader.parse(object((0..<most).map { "k\($0)" })) != nil)
        #expect(JSONReader.parse(object((0...most).map { "k\($0)" })) == nil)
    }

    @Test func readerRefusesInvalidUTF8() {
        for bytes: [UInt8] in [
            [0x22, 0xff, 0x22], [0x22, 0xc3, 0x22], [0x22, 0xed, 0xa0, 0x80, 0x22], [0x22, 0xc0, 0xaf, 0x22],
        ] {
            #expect(JSONReader.parse(bytes) == nil, "\(bytes)")
        }
    }

    @Test(arguments: [
        ("0", "0"), ("-0", "-0"), ("12.5e-3", "12.5e-3"),
        (#""\u00e9\ud83c\udf6a\"\\\/\b\f\n\r\t""#, "é🍪\"\\/\u{8}\u{c}\n\r\t"),
        (" [ true , false , null ] ", "[true,false,null]"), (#"{"":{"b":[]}}"#, #"{"":{"b":[]}}"#),
        (
            String(repeating: "[", count: 63) + String(repeating: "]", count: 63),
            String(repeating: "[", count: 63) + String(repeating: "]", count: 63)
        ),
    ])
    func readerAcceptsValidJSON(_ text: String, _ expected: String) throws {
        let value = try #require(JSONReader.parse(Array(text.utf8)))
        #expect(Self.render(value) == expected)
    }

    /// The parsed value written back compactly, to compare with what the text meant.
    static func render(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let bool): bool ? "true" : "false"
        case .number(let text): String(text)
        case .string(let text): text
        case .array(let values): "[" + values.map(render).joined(separator: ",") + "]"
        case .object(let members):
            "{" + members.map { "\"\($0.key)\":" + render($0.value) }.joined(separator: ",") + "}"
        }
    }
}
