import Foundation
import KeyjarCodec
import KeyjarCore

// Hand-written JSON for the messages on the hot path: a Set-Cookie from a client and its
// acknowledgement, a cookie lookup, a bulk import, snapshots, the cookie events every
// subscriber decodes, and what a one-shot client (git's credential helper) sends: the
// handshake, a credential lookup, a password request. Foundation's coders cost tens of microseconds per message, a large share
// of an acknowledged write's budget. Every other message, and any input the fast reader does not accept exactly, goes
// through `Codable`, which stays the definition of the format: tests check that both agree.

extension MessageCoding {
    /// A client message as JSON: hand-written for the frequent requests.
    public static func encode(_ message: ClientMessage) -> [UInt8] {
        fastJSON(message) ?? encode(codable: message)
    }

    /// A server message as JSON: hand-written for frequent replies and cookie events.
    public static func encode(_ message: ServerMessage) -> [UInt8] {
        fastJSON(message) ?? encode(codable: message)
    }

    public static func decode(
        _ type: ClientMessage.Type,
        from payload: some Sequence<UInt8>
    ) throws(WireError) -> ClientMessage {
        if let message = payload.withContiguousStorageIfAvailable({
            JSONReader.parse($0).flatMap(ClientMessage.init(json:))
        }) ?? nil {
            return message
        }
        return try decode(codable: type, from: payload)
    }

    public static func decode(
        _ type: ServerMessage.Type,
        from payload: some Sequence<UInt8>
    ) throws(WireError) -> ServerMessage {
        if let message = payload.withContiguousStorageIfAvailable({
            ServerMessage(canonicalEvent: $0) ?? JSONReader.parse($0).flatMap(ServerMessage.init(json:))
        }) ?? nil {
            return message
        }
        return try decode(codable: type, from: payload)
    }

    static func fastJSON(_ message: ClientMessage) -> [UInt8]? {
        var writer = JSONWriter()
        writer.raw(#"{"id":"#)
        writer.write(integer: message.id)
        switch message.request {
        case .setCookies(let headers, let context):
            writer.raw(#","request":{"setCookies":{"headers":["#)
            for (index, header) in headers.enumerated() {
                if index > 0 { writer.raw(",") }
                writer.write(string: header)
            }
            writer.raw(#"],"context":"#)
            writer.write(context)
            writer.raw("}}}")
        case .cookieHeader(let context):
            writer.raw(#","request":{"cookieHeader":{"context":"#)
            writer.write(context)
            writer.raw("}}}")
        case .cookies(let context):
            writer.raw(#","request":{"cookies":{"context":"#)
            writer.write(context)
            writer.raw("}}}")
        case .insertCookies(let cookies):
            writer.raw(#","request":{"insertCookies":{"cookies":"#)
            writer.write(cookies: cookies)
            writer.raw("}}}")
        case .importCookies(let format, let text, let firstLine):
            // A whole cookies.txt: Foundation's encoder takes a noticeable part of an import.
            writer.raw(#","request":{"importCookies":{"format":"#)
            writer.write(string: format.rawValue)
            if let firstLine {
                writer.raw(#","firstLine":"#)
                writer.bytes.append(contentsOf: String(firstLine).utf8)
            }
            writer.raw(#","text":"#)
            writer.write(string: text)
            writer.raw("}}}")
        case .hello(let version, let client):
            // Every connection's first message: a one-shot client would otherwise load
            // Foundation's coders for it alone.
            writer.raw(#","request":{"hello":{"version":"#)
            writer.write(integer: version)
            writer.raw(#","client":"#)
            writer.write(string: client)
            writer.raw("}}}")
        case .follow(let after):
            // A replica that does not listen sends one before a lookup after another's change.
            writer.raw(#","request":{"follow":{"after":"#)
            writer.write(integer: after)
            writer.raw("}}}")
        case .credentialChoice(let space):
            writer.raw(#","request":{"credentialChoice":{"space":"#)
            writer.write(space: space)
            writer.raw("}}}")
        case .password(let space, let user):
            writer.raw(#","request":{"password":{"space":"#)
            writer.write(space: space)
            writer.raw(#","user":"#)
            writer.write(string: user)
            writer.raw("}}}")
        case .setCredential(let space, let user, let password, let makeDefault):
            // By hand, with room for all of it at once, so that no copy of the password is left
            // in memory that is not wiped (Foundation's encoder and a growing buffer leave some).
            writer.bytes.reserveCapacity(
                writer.bytes.count + 256 + 6
                    * (space.host.utf8.count + (space.realm?.utf8.count ?? 0)
                        + user.utf8.count + password.utf8.count)
            )
            writer.raw(#","request":{"setCredential":{"space":"#)
            writer.write(space: space)
            writer.raw(#","user":"#)
            writer.write(string: user)
            writer.raw(#","password":"#)
            writer.write(string: password)
            writer.raw(makeDefault ? #","makeDefault":true}}}"# : #","makeDefault":false}}}"#)
        default:
            return nil
        }
        return writer.bytes
    }

    static func fastJSON(_ message: ServerMessage) -> [UInt8]? {
        var writer = JSONWriter()
        switch message {
        case .reply(let id, let response):
            writer.raw(#"{"reply":{"id":"#)
            writer.write(integer: id)
            writer.raw(#","response":"#)
            switch response {
            case .hello(let version, let server, let sequence):
                writer.raw(#"{"hello":{"version":"#)
                writer.write(integer: version)
                writer.raw(#","server":"#)
                writer.write(string: server)
                writer.raw(#","sequence":"#)
                writer.write(integer: sequence)
                writer.raw("}}")
            case .ok:
                writer.raw(#"{"ok":{}}"#)
            case .subscribed(let sequence):
                writer.raw(#"{"subscribed":{"sequence":"#)
                writer.write(integer: sequence)
                writer.raw("}}")
            case .committed(let sequence):
                writer.raw(#"{"committed":{"#)
                writer.write(optionalSequence: sequence, leadingComma: false)
                writer.raw("}}")
            case .cookieHeader(let header):
                writer.raw(#"{"cookieHeader":{"#)
                if let header {
                    writer.raw(#""header":"#)
                    writer.write(string: header)
                }
                writer.raw("}}")
            case .cookieOutcomes(let outcomes, let sequence):
                writer.raw(#"{"cookieOutcomes":{"outcomes":["#)
                for (index, outcome) in outcomes.enumerated() {
                    if index > 0 { writer.raw(",") }
                    if let outcome { writer.write(string: outcome) } else { writer.raw("null") }
                }
                writer.raw("]")
                writer.write(optionalSequence: sequence, leadingComma: true)
                writer.raw("}}")
            case .cookies(let cookies):
                writer.raw(#"{"cookies":{"cookies":"#)
                writer.write(cookies: cookies)
                writer.raw("}}")
            case .snapshot(let snapshot):
                guard writer.write(snapshotCase: snapshot) else { return nil }
            case .password(let password):
                // Room for the whole reply at once (a character escapes to at most six bytes):
                // a growing buffer would leave freed copies of the password behind, unwiped.
                writer.bytes.reserveCapacity(writer.bytes.count + 32 + 6 * (password?.utf8.count ?? 0))
                writer.raw(#"{"password":{"#)
                if let password {
                    writer.raw(#""password":"#)
                    writer.write(string: password)
                }
                writer.raw("}}")
            default:
                return nil
            }
            writer.raw("}}")
        case .event(let event):
            guard case .cookies = event.event else { return nil }
            return Array(eventPayload(sequence: event.sequence, eventJSON: StoreEventJSON.encode(event.event)).utf8)
        case .snapshot(let snapshot):
            // Every client starts from one, and a jar of 10,000 cookies took Foundation's coders
            // tens of milliseconds each way.
            guard writer.write(snapshotCase: snapshot) else { return nil }
        default:
            return nil
        }
        return writer.bytes
    }

    /// The pushed message for a logged event, from the event's JSON as the change log keeps it
    /// (so keyjard encodes each event once, whatever the number of subscribers).
    public static func eventPayload(sequence: UInt64, eventJSON: String) -> String {
        #"{"event":{"event":{"sequence":\#(sequence),"event":\#(eventJSON)}}}"#
    }
}

extension JSONWriter {
    mutating func write(_ context: WireCookieContext) {
        raw(#"{"url":"#)
        write(string: context.url)
        if let mainDocumentURL = context.mainDocumentURL {
            raw(#","mainDocumentURL":"#)
            write(string: mainDocumentURL)
        }
        raw(#","isTopLevelNavigation":"#)
        write(bool: context.isTopLevelNavigation)
        raw(#","method":"#)
        write(string: context.method)
        raw(#","nonHTTP":"#)
        write(bool: context.nonHTTP)
        raw("}")
    }

    /// `"sequence":N` when there is one: `Codable` leaves out a nil optional.
    mutating func write(optionalSequence sequence: UInt64?, leadingComma: Bool) {
        guard let sequence else { return }
        if leadingComma { raw(",") }
        raw(#""sequence":"#)
        write(integer: sequence)
    }
}

extension JSONWriter {
    /// `{"snapshot":{"snapshot":…}}`, the shape of both the `snapshot` reply and the pushed
    /// `snapshot` message: cookies written by hand, the small policy and credential list through
    /// `Codable`. False when those could not be encoded.
    mutating func write(snapshotCase snapshot: StoreSnapshot) -> Bool {
        guard let policy = try? MessageCoding.encoder().encode(snapshot.policy),
            let credentials = try? MessageCoding.encoder().encode(snapshot.credentials)
        else { return false }
        raw(#"{"snapshot":{"snapshot":{"cookies":"#)
        write(cookies: snapshot.cookies)
        raw(#","policy":"#)
        bytes.append(contentsOf: policy)
        raw(#","credentials":"#)
        bytes.append(contentsOf: credentials)
        raw(#","sequence":"#)
        write(integer: snapshot.sequence)
        raw("}}}")
        return true
    }
}

extension StoreSnapshot {
    /// Cookies read by hand; the policy and credentials, small, handed back to `Codable`.
    init?(json: JSONValue) {
        guard let keys = json.keys, keys.count == 4, let cookiesJSON = json["cookies"],
            let cookies = Cookie.array(json: cookiesJSON), let policyJSON = json["policy"],
            let credentialsJSON = json["credentials"], let sequence = json["sequence"]?.uint64,
            let policy = try? MessageCoding.decoder().decode(CookiePolicy.self, from: Data(policyJSON.serialized())),
            let credentials = try? MessageCoding.decoder().decode(
                [CredentialRecord].self,
                from: Data(credentialsJSON.serialized())
            )
        else { return nil }
        self.init(cookies: cookies, policy: policy, credentials: credentials, sequence: sequence)
    }
}

extension WireCookieContext {
    init?(json: JSONValue) {
        guard let keys = json.keys, let url = json["url"]?.string,
            let isTopLevelNavigation = json["isTopLevelNavigation"]?.bool,
            let method = json["method"]?.string, let nonHTTP = json["nonHTTP"]?.bool
        else { return nil }
        var mainDocumentURL: String?
        switch json["mainDocumentURL"] {
        case nil, .null?: break
        case let value?:
            guard let string = value.string else { return nil }
            mainDocumentURL = string
        }
        let known = 4 + (json["mainDocumentURL"] == nil ? 0 : 1)
        guard keys.count == known else { return nil }
        self.init(
            url: url,
            mainDocumentURL: mainDocumentURL,
            isTopLevelNavigation: isTopLevelNavigation,
            method: method,
            nonHTTP: nonHTTP
        )
    }
}

extension ClientMessage {
    init?(json: JSONValue) {
        guard let keys = json.keys, keys.count == 2, let id = json["id"]?.uint64,
            let (name, body) = json["request"]?.singleMember,
            let bodyKeys = body.keys
        else { return nil }
        switch name {
        case "setCookies":
            guard bodyKeys.count == 2, let headersJSON = body["headers"]?.array, let contextJSON = body["context"],
                let context = WireCookieContext(json: contextJSON)
            else { return nil }
            var headers: [String] = []
            headers.reserveCapacity(headersJSON.count)
            for header in headersJSON {
                guard let string = header.string else { return nil }
                headers.append(string)
            }
            self.init(id: id, request: .setCookies(headers: headers, context: context))
        case "cookieHeader", "cookies":
            guard bodyKeys == ["context"], let contextJSON = body["context"],
                let context = WireCookieContext(json: contextJSON)
            else { return nil }
            self.init(id: id, request: name == "cookies" ? .cookies(context: context) : .cookieHeader(context: context))
        case "insertCookies":
            guard bodyKeys == ["cookies"], let cookiesJSON = body["cookies"],
                let cookies = Cookie.array(json: cookiesJSON)
            else { return nil }
            self.init(id: id, request: .insertCookies(cookies: cookies))
        case "importCookies":
            guard Set(bodyKeys).isSubset(of: ["format", "text", "firstLine"]),
                Set(bodyKeys).isSuperset(of: ["format", "text"]),
                let formatName = body["format"]?.string, let format = CookieFileFormat(rawValue: formatName),
                let text = body["text"]?.string
            else { return nil }
            var firstLine: Int?
            if let number = body["firstLine"] {
                guard let value = number.uint64, let line = Int(exactly: value) else { return nil }
                firstLine = line
            }
            self.init(id: id, request: .importCookies(format: format, text: text, firstLine: firstLine))
        case "setCredential":
            // By hand so that keyjard's decoding makes no copy of the frame, which holds the
            // password, beyond the buffer it wipes (Foundation's decoder copies the payload).
            guard bodyKeys.sorted() == ["makeDefault", "password", "space", "user"], let spaceJSON = body["space"],
                let space = ProtectionSpace(json: spaceJSON), let user = body["user"]?.string,
                let password = body["password"]?.string, let makeDefault = body["makeDefault"]?.bool
            else { return nil }
            self.init(
                id: id,
                request: .setCredential(space: space, user: user, password: password, makeDefault: makeDefault)
            )
        case "hello":
            guard bodyKeys.count == 2, let version = body["version"]?.int, let client = body["client"]?.string else {
                return nil
            }
            self.init(id: id, request: .hello(version: version, client: client))
        case "follow":
            guard bodyKeys == ["after"], let after = body["after"]?.uint64 else { return nil }
            self.init(id: id, request: .follow(after: after))
        case "credentialChoice":
            guard bodyKeys == ["space"], let spaceJSON = body["space"], let space = ProtectionSpace(json: spaceJSON)
            else {
                return nil
            }
            self.init(id: id, request: .credentialChoice(space: space))
        case "password":
            guard bodyKeys.count == 2, let spaceJSON = body["space"], let space = ProtectionSpace(json: spaceJSON),
                let user = body["user"]?.string
            else { return nil }
            self.init(id: id, request: .password(space: space, user: user))
        default:
            return nil
        }
    }
}

extension ProtectionSpace {
    /// Only a space as keyjard and its clients write it (host and protocol already canonical,
    /// the port given); anything else is left to `Codable`, which keeps fields as written.
    init?(json: JSONValue) {
        guard let keys = json.keys, let host = json["host"]?.string, let port = json["port"]?.int,
            let scheme = json["protocol"]?.string,
            let method = json["authenticationMethod"]?.string.flatMap(AuthenticationMethod.init(rawValue:)),
            let proxy = json["proxyType"]?.string.flatMap(ProxyType.init(rawValue:))
        else { return nil }
        var realm: String?
        if let realmJSON = json["realm"] {
            guard let value = realmJSON.string else { return nil }
            realm = value
        }
        let expected =
            ["authenticationMethod", "host", "port", "protocol", "proxyType"] + (realm == nil ? [] : ["realm"])
        guard keys.sorted() == expected.sorted() else { return nil }
        self.init(
            host: host,
            port: port,
            protocol: scheme,
            realm: realm,
            authenticationMethod: method,
            proxyType: proxy
        )
        guard self.host == host, self.port == port, self.protocol == scheme else { return nil }
    }
}

extension ServerMessage {
    /// A pushed cookie event exactly as keyjard writes it (``MessageCoding/eventPayload(sequence:eventJSON:)``),
    /// read without a JSON tree: every subscriber of every process decodes each change, and
    /// building the tree was most of that work. Anything else answers nil.
    init?(canonicalEvent bytes: UnsafeBufferPointer<UInt8>) {
        var reader = JSONReader(bytes: bytes)
        guard reader.skip(#"{"event":{"event":{"sequence":"#), let sequence = reader.readUInt64(),
            reader.skip(#","event":"#), let event = StoreEvent(canonical: &reader), reader.skip("}}}"), reader.isAtEnd
        else { return nil }
        self = .event(event: SequencedEvent(sequence: sequence, event: event))
    }

    init?(json: JSONValue) {
        guard let (kind, body) = json.singleMember else { return nil }
        switch kind {
        case "reply":
            guard let keys = body.keys, keys.count == 2, let id = body["id"]?.uint64,
                let responseJSON = body["response"],
                let response = Response(fastJSON: responseJSON)
            else { return nil }
            self = .reply(id: id, response: response)
        case "event":
            guard body.keys == ["event"], let sequenced = body["event"], let keys = sequenced.keys, keys.count == 2,
                let sequence = sequenced["sequence"]?.uint64, let eventJSON = sequenced["event"],
                let event = StoreEvent(json: eventJSON)
            else { return nil }
            self = .event(event: SequencedEvent(sequence: sequence, event: event))
        case "snapshot":
            guard body.keys == ["snapshot"], let snapshotJSON = body["snapshot"],
                let snapshot = StoreSnapshot(json: snapshotJSON)
            else { return nil }
            self = .snapshot(snapshot: snapshot)
        default:
            return nil
        }
    }
}

extension Response {
    init?(fastJSON json: JSONValue) {
        guard let (kind, body) = json.singleMember, let keys = body.keys else { return nil }
        func sequence() -> UInt64?? {
            switch body["sequence"] {
            case nil, .null?: return .some(nil)
            case let value?: return value.uint64.map { .some($0) }
            }
        }
        switch kind {
        case "hello" where keys.count == 3:
            guard let version = body["version"]?.int, let server = body["server"]?.string,
                let sequence = body["sequence"]?.uint64
            else { return nil }
            self = .hello(version: version, server: server, sequence: sequence)
        case "ok" where keys.isEmpty:
            self = .ok
        case "subscribed" where keys == ["sequence"]:
            guard let sequence = body["sequence"]?.uint64 else { return nil }
            self = .subscribed(sequence: sequence)
        case "committed" where keys.allSatisfy({ $0 == "sequence" }):
            guard let sequence = sequence() else { return nil }
            self = .committed(sequence: sequence)
        case "cookieHeader" where keys.allSatisfy({ $0 == "header" }):
            switch body["header"] {
            case nil, .null?: self = .cookieHeader(header: nil)
            case let value?:
                guard let header = value.string else { return nil }
                self = .cookieHeader(header: header)
            }
        case "cookieOutcomes" where keys.allSatisfy({ $0 == "outcomes" || $0 == "sequence" }):
            guard let outcomesJSON = body["outcomes"]?.array, let sequence = sequence() else { return nil }
            var outcomes: [String?] = []
            outcomes.reserveCapacity(outcomesJSON.count)
            for outcome in outcomesJSON {
                if outcome.isNull {
                    outcomes.append(nil)
                } else {
                    guard let reason = outcome.string else { return nil }
                    outcomes.append(reason)
                }
            }
            self = .cookieOutcomes(outcomes: outcomes, sequence: sequence)
        case "snapshot" where keys == ["snapshot"]:
            guard let snapshotJSON = body["snapshot"], let snapshot = StoreSnapshot(json: snapshotJSON) else {
                return nil
            }
            self = .snapshot(snapshot: snapshot)
        case "cookies" where keys == ["cookies"]:
            guard let cookiesJSON = body["cookies"], let cookies = Cookie.array(json: cookiesJSON) else { return nil }
            self = .cookies(cookies: cookies)
        case "password" where keys.count <= 1 && keys.allSatisfy({ $0 == "password" }):
            switch body["password"] {
            case nil, .null?: self = .password(password: nil)
            case let value?:
                guard let password = value.string else { return nil }
                self = .password(password: password)
            }
        default:
            return nil
        }
    }
}

extension JSONWriter {
    /// A protection space with `Codable`'s keys, in its order.
    mutating func write(space: ProtectionSpace) {
        raw(#"{"host":"#)
        write(string: space.host)
        raw(#","port":"#)
        bytes.append(contentsOf: String(space.port).utf8)
        raw(#","protocol":"#)
        write(string: space.protocol)
        if let realm = space.realm {
            raw(#","realm":"#)
            write(string: realm)
        }
        raw(#","authenticationMethod":"#)
        write(string: space.authenticationMethod.rawValue)
        raw(#","proxyType":"#)
        write(string: space.proxyType.rawValue)
        raw("}")
    }
}
