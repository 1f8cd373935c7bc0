package import KeyjarCodec
import KeyjarCore

// A client message: `{"id":N,"request":{"<case>":{<its values by label>}}}`, an absent value
// for a nil optional.

extension JSONWriter {
    mutating func write(_ message: ClientMessage) {
        raw(#"{"id":"#)
        write(integer: message.id)
        raw(#","request":"#)
        write(message.request)
        raw("}")
    }

    mutating func write(_ request: Request) {
        switch request {
        case .hello(let version, let client):
            raw(#"{"hello":{"version":"#)
            write(integer: version)
            raw(#","client":"#)
            write(string: client)
        case .subscribe(let after):
            raw(#"{"subscribe":{"#)
            if let after {
                raw(#""after":"#)
                write(integer: after)
            }
        case .follow(let after):
            raw(#"{"follow":{"after":"#)
            write(integer: after)
        case .snapshot: raw(#"{"snapshot":{"#)
        case .status: raw(#"{"status":{"#)
        case .cookieHeader(let context):
            raw(#"{"cookieHeader":{"context":"#)
            write(context)
        case .cookies(let context):
            raw(#"{"cookies":{"context":"#)
            write(context)
        case .setCookies(let headers, let context):
            raw(#"{"setCookies":{"headers":["#)
            for (index, header) in headers.enumerated() {
                if index > 0 { raw(",") }
                write(string: header)
            }
            raw(#"],"context":"#)
            write(context)
        case .insertCookies(let cookies):
            raw(#"{"insertCookies":{"cookies":"#)
            write(cookies: cookies)
        case .deleteCookies(let identities):
            raw(#"{"deleteCookies":{"identities":["#)
            for (index, identity) in identities.enumerated() {
                if index > 0 { raw(",") }
                write(identity)
            }
            raw("]")
        case .clearCookies(let domain):
            raw(#"{"clearCookies":{"#)
            if let domain {
                raw(#""domain":"#)
                write(string: domain)
            }
        case .removeCookiesCreated(let since):
            raw(#"{"removeCookiesCreated":{"since":"#)
            write(number: since)
        case .listCookies(let domain):
            raw(#"{"listCookies":{"#)
            if let domain {
                raw(#""domain":"#)
                write(string: domain)
            }
        case .importCookies(let format, let text, let firstLine):
            raw(#"{"importCookies":{"format":"#)
            write(string: format.rawValue)
            raw(#","text":"#)
            write(string: text)
            if let firstLine {
                raw(#","firstLine":"#)
                write(integer: firstLine)
            }
        case .exportCookies(let format, let includeSameSite):
            raw(#"{"exportCookies":{"format":"#)
            write(string: format.rawValue)
            raw(#","includeSameSite":"#)
            write(bool: includeSameSite)
        case .policy: raw(#"{"policy":{"#)
        case .setPolicy(let policy):
            raw(#"{"setPolicy":{"policy":"#)
            write(policy)
        case .credentials(let space):
            raw(#"{"credentials":{"space":"#)
            write(space)
        case .allCredentials: raw(#"{"allCredentials":{"#)
        case .credentialChoice(let space):
            raw(#"{"credentialChoice":{"space":"#)
            write(space)
        case .setCredential(let space, let user, let password, let makeDefault):
            // With room for all of it at once (a character escapes to at most six bytes), so
            // that a growing buffer leaves no freed copy of the password behind, unwiped.
            bytes.reserveCapacity(
                bytes.count + 256 + 6
                    * (space.host.utf8.count + space.protocol.utf8.count + (space.realm?.utf8.count ?? 0)
                        + user.utf8.count + password.utf8.count)
            )
            raw(#"{"setCredential":{"space":"#)
            write(space)
            raw(#","user":"#)
            write(string: user)
            raw(#","password":"#)
            write(string: password)
            raw(#","makeDefault":"#)
            write(bool: makeDefault)
        case .removeCredential(let space, let user):
            raw(#"{"removeCredential":{"space":"#)
            write(space)
            raw(#","user":"#)
            write(string: user)
        case .setDefaultCredential(let space, let user):
            raw(#"{"setDefaultCredential":{"space":"#)
            write(space)
            raw(#","user":"#)
            write(string: user)
        case .password(let space, let user):
            raw(#"{"password":{"space":"#)
            write(space)
            raw(#","user":"#)
            write(string: user)
        case .unlockSecrets(let passphrase, let create, let lockAfterIdle):
            raw(#"{"unlockSecrets":{"passphrase":"#)
            write(string: passphrase)
            // Absent is false: a client that never asks to create one creates nothing.
            if create { raw(#","create":true"#) }
            if let lockAfterIdle {
                raw(#","lockAfterIdle":"#)
                write(integer: lockAfterIdle)
            }
        case .lockSecrets: raw(#"{"lockSecrets":{"#)
        case .migrateSecrets(let backend, let path, let passphrase):
            raw(#"{"migrateSecrets":{"backend":"#)
            write(string: backend)
            if let path {
                raw(#","path":"#)
                write(string: path)
            }
            if let passphrase {
                raw(#","passphrase":"#)
                write(string: passphrase)
            }
        case .repairCredentials(let removeUnpaired):
            raw(#"{"repairCredentials":{"#)
            // Absent is false: the request of a client that never asks removes nothing.
            if removeUnpaired { raw(#""removeUnpaired":true"#) }
        case .saveCredentials(let writes):
            // Room for all of it at once, as for setCredential: no freed copy of a secret.
            bytes.reserveCapacity(
                bytes.count + 64
                    + writes.reduce(0) { total, write in
                        total + 512 + 6
                            * (write.space.host.utf8.count + (write.space.realm?.utf8.count ?? 0)
                                + write.user.utf8.count
                                + write.password.utf8.count + (write.refreshToken?.utf8.count ?? 0)
                                + (write.tokenRefresh.map { $0.endpoint.utf8.count + ($0.clientID?.utf8.count ?? 0) }
                                    ?? 0))
                    }
            )
            raw(#"{"saveCredentials":{"writes":["#)
            for (index, credential) in writes.enumerated() {
                if index > 0 { raw(",") }
                write(credential)
            }
            raw("]")
        case .refreshToken(let space, let user):
            raw(#"{"refreshToken":{"space":"#)
            write(space)
            raw(#","user":"#)
            write(string: user)
        case .beginTokenRefresh(let space, let user, let rejected):
            bytes.reserveCapacity(
                bytes.count + 512 + 6 * (space.host.utf8.count + user.utf8.count + (rejected?.utf8.count ?? 0))
            )
            raw(#"{"beginTokenRefresh":{"space":"#)
            write(space)
            raw(#","user":"#)
            write(string: user)
            if let rejected {
                raw(#","rejected":"#)
                write(string: rejected)
            }
        case .finishTokenRefresh(let space, let user, let outcome):
            bytes.reserveCapacity(
                bytes.count + 512 + 6 * (space.host.utf8.count + user.utf8.count + outcome.secretBytes)
            )
            raw(#"{"finishTokenRefresh":{"space":"#)
            write(space)
            raw(#","user":"#)
            write(string: user)
            raw(#","outcome":"#)
            write(outcome)
        case .beginImport: raw(#"{"beginImport":{"#)
        case .finishImport: raw(#"{"finishImport":{"#)
        }
        raw("}}")
    }
}

extension ClientMessage {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(id: try json.uint64("id"), request: try json.required("request", Request.init(json:)))
    }
}

extension Request {
    static let cases = [
        "hello", "subscribe", "follow", "snapshot", "status", "cookieHeader", "cookies", "setCookies",
        "insertCookies", "deleteCookies", "clearCookies", "removeCookiesCreated", "listCookies", "importCookies",
        "exportCookies", "policy", "setPolicy", "credentials", "allCredentials", "credentialChoice", "setCredential",
        "removeCredential", "setDefaultCredential", "password", "repairCredentials", "beginImport", "finishImport",
        "saveCredentials", "refreshToken", "beginTokenRefresh", "finishTokenRefresh", "unlockSecrets", "lockSecrets",
        "migrateSecrets",
    ]

    package init(json: JSONValue) throws(JSONShapeError) {
        let (name, body) = try json.enumCase(of: Self.cases)
        do {
            self = try Self.read(name, body)
        } catch {
            throw error.under(name)
        }
    }

    private static func read(_ name: String, _ body: JSONValue) throws(JSONShapeError) -> Request {
        func space() throws(JSONShapeError) -> ProtectionSpace {
            try body.required("space", ProtectionSpace.init(json:))
        }
        func context() throws(JSONShapeError) -> WireCookieContext {
            try body.required("context", WireCookieContext.init(json:))
        }
        switch name {
        case "hello": return .hello(version: try body.int("version"), client: try body.string("client"))
        case "subscribe": return .subscribe(after: try body.optionalInteger("after", as: UInt64.self))
        case "follow": return .follow(after: try body.uint64("after"))
        case "snapshot": return .snapshot
        case "status": return .status
        case "cookieHeader": return .cookieHeader(context: try context())
        case "cookies": return .cookies(context: try context())
        case "setCookies":
            let headers = try body.required("headers") { (value) throws(JSONShapeError) in
                try value.elements { (header) throws(JSONShapeError) in try header.decodeString() }
            }
            return .setCookies(headers: headers, context: try context())
        case "insertCookies": return .insertCookies(cookies: try body.required("cookies", Cookie.array(json:)))
        case "deleteCookies":
            return .deleteCookies(
                identities: try body.required("identities") { (value) throws(JSONShapeError) in
                    try value.elements(Cookie.Identity.init(json:))
                }
            )
        case "clearCookies": return .clearCookies(domain: try body.optionalString("domain"))
        case "removeCookiesCreated": return .removeCookiesCreated(since: try body.double("since"))
        case "listCookies": return .listCookies(domain: try body.optionalString("domain"))
        case "importCookies":
            return .importCookies(
                format: try body.rawValue("format"),
                text: try body.string("text"),
                firstLine: try body.optionalInteger("firstLine", as: Int.self)
            )
        case "exportCookies":
            return .exportCookies(
                format: try body.rawValue("format"),
                includeSameSite: try body.bool("includeSameSite")
            )
        case "policy": return .policy
        case "setPolicy": return .setPolicy(policy: try body.required("policy", CookiePolicy.init(json:)))
        case "credentials": return .credentials(space: try space())
        case "allCredentials": return .allCredentials
        case "credentialChoice": return .credentialChoice(space: try space())
        case "setCredential":
            return .setCredential(
                space: try space(),
                user: try body.string("user"),
                password: try body.string("password"),
                makeDefault: try body.bool("makeDefault")
            )
        case "removeCredential": return .removeCredential(space: try space(), user: try body.string("user"))
        case "setDefaultCredential": return .setDefaultCredential(space: try space(), user: try body.string("user"))
        case "password": return .password(space: try space(), user: try body.string("user"))
        case "beginImport": return .beginImport
        case "lockSecrets": return .lockSecrets
        case "migrateSecrets":
            return .migrateSecrets(
                backend: try body.string("backend"),
                path: try body.optionalString("path"),
                passphrase: try body.optionalString("passphrase")
            )
        case "unlockSecrets":
            return .unlockSecrets(
                passphrase: try body.string("passphrase"),
                create: try body.optional("create") { (value) throws(JSONShapeError) in try value.decodeBool() }
                    ?? false,
                lockAfterIdle: try body.optionalInteger("lockAfterIdle", as: Int.self)
            )
        case "finishImport": return .finishImport
        case "saveCredentials":
            return .saveCredentials(
                writes: try body.required("writes") { (value) throws(JSONShapeError) in
                    try value.elements(CredentialWrite.init(json:))
                }
            )
        case "refreshToken": return .refreshToken(space: try space(), user: try body.string("user"))
        case "beginTokenRefresh":
            return .beginTokenRefresh(
                space: try space(),
                user: try body.string("user"),
                rejected: try body.optionalString("rejected")
            )
        case "finishTokenRefresh":
            return .finishTokenRefresh(
                space: try space(),
                user: try body.string("user"),
                outcome: try body.required("outcome", TokenRefreshOutcome.init(json:))
            )
        default:
            return .repairCredentials(
                removeUnpaired: try body.optional("removeUnpaired") { (value) throws(JSONShapeError) in
                    try value.decodeBool()
                } ?? false
            )
        }
    }
}
