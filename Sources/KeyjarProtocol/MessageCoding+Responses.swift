package import KeyjarCodec
import KeyjarCore

// A reply's response: `{"<case>":{<its values by label>}}`, an absent value for a nil optional.

extension JSONWriter {
    mutating func write(_ response: Response) {
        switch response {
        case .hello(let version, let server, let sequence):
            raw(#"{"hello":{"version":"#)
            write(integer: version)
            raw(#","server":"#)
            write(string: server)
            raw(#","sequence":"#)
            write(integer: sequence)
        case .ok: raw(#"{"ok":{"#)
        case .committed(let sequence):
            raw(#"{"committed":{"#)
            write(optionalSequence: sequence, leadingComma: false)
        case .subscribed(let sequence):
            raw(#"{"subscribed":{"sequence":"#)
            write(integer: sequence)
        case .snapshot(let snapshot):
            raw(#"{"snapshot":{"snapshot":"#)
            write(snapshot)
        case .status(let status):
            raw(#"{"status":{"status":"#)
            write(status)
        case .cookieHeader(let header):
            raw(#"{"cookieHeader":{"#)
            if let header {
                raw(#""header":"#)
                write(string: header)
            }
        case .cookies(let cookies):
            raw(#"{"cookies":{"cookies":"#)
            write(cookies: cookies)
        case .cookieOutcomes(let outcomes, let sequence):
            raw(#"{"cookieOutcomes":{"outcomes":["#)
            for (index, outcome) in outcomes.enumerated() {
                if index > 0 { raw(",") }
                if let outcome { write(string: outcome) } else { raw("null") }
            }
            raw("]")
            write(optionalSequence: sequence, leadingComma: true)
        case .importReport(let imported, let expired, let problems, let sequence, let added, let replaced, let evicted):
            raw(#"{"importReport":{"imported":"#)
            write(integer: imported)
            raw(#","expired":"#)
            write(integer: expired)
            raw(#","problems":["#)
            for (index, problem) in problems.enumerated() {
                if index > 0 { raw(",") }
                write(problem)
            }
            raw("]")
            write(optionalSequence: sequence, leadingComma: true)
            for (key, count) in [
                (#","added":"# as StaticString, added), (#","replaced":"#, replaced), (#","evicted":"#, evicted),
            ] {
                guard let count else { continue }
                raw(key)
                write(integer: count)
            }
        case .exported(let text, let omitted):
            raw(#"{"exported":{"text":"#)
            write(string: text)
            if omitted > 0 {
                raw(#","omitted":"#)
                write(integer: omitted)
            }
        case .policy(let policy):
            raw(#"{"policy":{"policy":"#)
            write(policy)
        case .credentials(let records):
            raw(#"{"credentials":{"records":"#)
            write(records: records)
        case .credentialChoice(let candidates, let preferred):
            raw(#"{"credentialChoice":{"candidates":"#)
            write(records: candidates)
            if let preferred {
                raw(#","preferred":"#)
                write(preferred)
            }
        case .password(let password):
            // Room for the whole reply at once (a character escapes to at most six bytes): a
            // growing buffer would leave freed copies of the password behind, unwiped.
            bytes.reserveCapacity(bytes.count + 32 + 6 * (password?.utf8.count ?? 0))
            raw(#"{"password":{"#)
            if let password {
                raw(#""password":"#)
                write(string: password)
            }
        case .refreshToken(let token):
            bytes.reserveCapacity(bytes.count + 32 + 6 * (token?.utf8.count ?? 0))
            raw(#"{"refreshToken":{"#)
            if let token {
                raw(#""token":"#)
                write(string: token)
            }
        case .tokenRefresh(let step):
            bytes.reserveCapacity(bytes.count + 512 + 6 * step.secretBytes)
            raw(#"{"tokenRefresh":{"step":"#)
            write(step)
        case .credentialsRepaired(let mismatches, let sequence):
            raw(#"{"credentialsRepaired":{"mismatches":["#)
            for (index, mismatch) in mismatches.enumerated() {
                if index > 0 { raw(",") }
                write(mismatch)
            }
            raw("]")
            write(optionalSequence: sequence, leadingComma: true)
        }
        raw("}}")
    }

    /// `"sequence":N` when there is one.
    mutating func write(optionalSequence sequence: UInt64?, leadingComma: Bool) {
        guard let sequence else { return }
        if leadingComma { raw(",") }
        raw(#""sequence":"#)
        write(integer: sequence)
    }
}

extension Response {
    static let cases = [
        "hello", "ok", "committed", "subscribed", "snapshot", "status", "cookieHeader", "cookies", "cookieOutcomes",
        "importReport", "exported", "policy", "credentials", "credentialChoice", "password", "credentialsRepaired",
        "refreshToken", "tokenRefresh",
    ]

    package init(json: JSONValue) throws(JSONShapeError) {
        let (name, body) = try json.enumCase(of: Self.cases)
        do {
            self = try Self.read(name, body)
        } catch {
            throw error.under(name)
        }
    }

    private static func read(_ name: String, _ body: JSONValue) throws(JSONShapeError) -> Response {
        func sequence() throws(JSONShapeError) -> UInt64? { try body.optionalInteger("sequence", as: UInt64.self) }
        switch name {
        case "hello":
            return .hello(
                version: try body.int("version"),
                server: try body.string("server"),
                sequence: try body.uint64("sequence")
            )
        case "ok": return .ok
        case "committed": return .committed(sequence: try sequence())
        case "subscribed": return .subscribed(sequence: try body.uint64("sequence"))
        case "snapshot": return .snapshot(snapshot: try body.required("snapshot", StoreSnapshot.init(json:)))
        case "status": return .status(status: try body.required("status", ServiceStatus.init(json:)))
        case "cookieHeader": return .cookieHeader(header: try body.optionalString("header"))
        case "cookies": return .cookies(cookies: try body.required("cookies", Cookie.array(json:)))
        case "cookieOutcomes":
            let outcomes = try body.required("outcomes") { (value) throws(JSONShapeError) in
                try value.elements { (outcome) throws(JSONShapeError) -> String? in
                    outcome.isNull ? nil : try outcome.decodeString()
                }
            }
            return .cookieOutcomes(outcomes: outcomes, sequence: try sequence())
        case "importReport":
            return .importReport(
                imported: try body.int("imported"),
                expired: try body.int("expired"),
                problems: try body.required("problems") { (value) throws(JSONShapeError) in
                    try value.elements(CookieFileProblem.init(json:))
                },
                sequence: try sequence(),
                added: try body.optionalInteger("added", as: Int.self),
                replaced: try body.optionalInteger("replaced", as: Int.self),
                evicted: try body.optionalInteger("evicted", as: Int.self)
            )
        case "exported":
            return .exported(
                text: try body.string("text"),
                omitted: try body.optionalInteger("omitted", as: Int.self) ?? 0
            )
        case "policy": return .policy(policy: try body.required("policy", CookiePolicy.init(json:)))
        case "credentials": return .credentials(records: try body.required("records", CredentialRecord.array(json:)))
        case "credentialChoice":
            return .credentialChoice(
                candidates: try body.required("candidates", CredentialRecord.array(json:)),
                preferred: try body.optional("preferred", CredentialRecord.init(json:))
            )
        case "password": return .password(password: try body.optionalString("password"))
        case "refreshToken": return .refreshToken(token: try body.optionalString("token"))
        case "tokenRefresh": return .tokenRefresh(step: try body.required("step", TokenRefreshStep.init(json:)))
        default:
            return .credentialsRepaired(
                mismatches: try body.required("mismatches") { (value) throws(JSONShapeError) in
                    try value.elements(CredentialMismatch.init(json:))
                },
                sequence: try sequence()
            )
        }
    }
}
