package import KeyjarCodec
import KeyjarCore

// The values only messages carry: a request's cookie context, the snapshot, keyjard's status,
// an error, an import's problem. Members in the order of the types' declarations, an absent
// member for a nil optional.

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

    mutating func write(_ snapshot: StoreSnapshot) {
        raw(#"{"cookies":"#)
        write(cookies: snapshot.cookies)
        raw(#","policy":"#)
        write(snapshot.policy)
        raw(#","credentials":"#)
        write(records: snapshot.credentials)
        raw(#","sequence":"#)
        write(integer: snapshot.sequence)
        raw("}")
    }

    mutating func write(_ status: ServiceStatus) {
        raw(#"{"version":"#)
        write(string: status.version)
        raw(#","protocolVersion":"#)
        write(integer: status.protocolVersion)
        raw(#","pid":"#)
        write(integer: status.pid)
        raw(#","socketPath":"#)
        write(string: status.socketPath)
        raw(#","databasePath":"#)
        write(string: status.databasePath)
        raw(#","schemaVersion":"#)
        write(integer: status.schemaVersion)
        raw(#","cookieCount":"#)
        write(integer: status.cookieCount)
        raw(#","credentialCount":"#)
        write(integer: status.credentialCount)
        raw(#","sequence":"#)
        write(integer: status.sequence)
        raw(#","secretsBackend":"#)
        write(string: status.secretsBackend)
        raw(#","secretsHealthy":"#)
        write(bool: status.secretsHealthy)
        raw(#","secretsDetail":"#)
        write(string: status.secretsDetail)
        raw(#","acceptPolicy":"#)
        write(string: status.acceptPolicy.rawValue)
        raw(#","connectedClients":"#)
        write(integer: status.connectedClients)
        if let inbound = status.inbound {
            raw(#","inbound":{"budget":"#)
            write(integer: inbound.budget)
            raw(#","reserved":"#)
            write(integer: inbound.reserved)
            raw(#","peakReserved":"#)
            write(integer: inbound.peakReserved)
            raw(#","buffered":"#)
            write(integer: inbound.buffered)
            raw(#","peakBuffered":"#)
            write(integer: inbound.peakBuffered)
            raw(#","maximumConnections":"#)
            write(integer: inbound.maximumConnections)
            raw(#","pausedConnections":"#)
            write(integer: inbound.pausedConnections)
            raw("}")
        }
        if let mismatches = status.credentialMismatches {
            raw(#","credentialMismatches":["#)
            for (index, mismatch) in mismatches.enumerated() {
                if index > 0 { raw(",") }
                write(mismatch)
            }
            raw("]")
        }
        if let lock = status.secretsLock {
            raw(#","secretsLock":{"locked":"#)
            write(bool: lock.isLocked)
            if let lockAfterIdle = lock.lockAfterIdle {
                raw(#","lockAfterIdle":"#)
                write(integer: lockAfterIdle)
            }
            if let locksIn = lock.locksIn {
                raw(#","locksIn":"#)
                write(integer: locksIn)
            }
            raw("}")
        }
        raw("}")
    }

    mutating func write(_ error: WireError) {
        raw(#"{"code":"#)
        write(integer: error.code)
        raw(#","message":"#)
        write(string: error.message)
        raw("}")
    }

    mutating func write(_ problem: CookieFileProblem) {
        raw(#"{"line":"#)
        write(integer: problem.line)
        raw(#","message":"#)
        write(string: problem.message)
        raw("}")
    }
}

extension WireCookieContext {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(
            url: try json.string("url"),
            mainDocumentURL: try json.optionalString("mainDocumentURL"),
            isTopLevelNavigation: try json.bool("isTopLevelNavigation"),
            method: try json.string("method"),
            nonHTTP: try json.bool("nonHTTP")
        )
    }
}

extension StoreSnapshot {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(
            cookies: try json.required("cookies", Cookie.array(json:)),
            policy: try json.required("policy", CookiePolicy.init(json:)),
            credentials: try json.required("credentials", CredentialRecord.array(json:)),
            sequence: try json.uint64("sequence")
        )
    }
}

extension ServiceStatus {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(
            version: try json.string("version"),
            protocolVersion: try json.int("protocolVersion"),
            pid: try json.integer("pid", as: Int32.self),
            socketPath: try json.string("socketPath"),
            databasePath: try json.string("databasePath"),
            schemaVersion: try json.integer("schemaVersion", as: Int64.self),
            cookieCount: try json.int("cookieCount"),
            credentialCount: try json.int("credentialCount"),
            sequence: try json.uint64("sequence"),
            secretsBackend: try json.string("secretsBackend"),
            secretsHealthy: try json.bool("secretsHealthy"),
            secretsDetail: try json.string("secretsDetail"),
            acceptPolicy: try json.rawValue("acceptPolicy"),
            connectedClients: try json.int("connectedClients"),
            inbound: try json.optional("inbound", Inbound.init(json:)),
            credentialMismatches: try json.optional("credentialMismatches") { (value) throws(JSONShapeError) in
                try value.elements(CredentialMismatch.init(json:))
            },
            secretsLock: try json.optional("secretsLock", SecretsLock.init(json:))
        )
    }
}

extension ServiceStatus.SecretsLock {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(
            isLocked: try json.bool("locked"),
            lockAfterIdle: try json.optionalInteger("lockAfterIdle", as: Int.self),
            locksIn: try json.optionalInteger("locksIn", as: Int.self)
        )
    }
}

extension ServiceStatus.Inbound {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(
            budget: try json.int("budget"),
            reserved: try json.int("reserved"),
            peakReserved: try json.int("peakReserved"),
            buffered: try json.int("buffered"),
            peakBuffered: try json.int("peakBuffered"),
            maximumConnections: try json.int("maximumConnections"),
            pausedConnections: try json.int("pausedConnections")
        )
    }
}

extension WireError {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(code: try json.integer("code", as: UInt16.self), message: try json.string("message"))
    }
}

extension CookieFileProblem {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(line: try json.int("line"), message: try json.string("message"))
    }
}

// MARK: Token refresh

extension JSONWriter {
    mutating func write(_ step: TokenRefreshStep) {
        switch step {
        case .current(let accessToken, let expires):
            raw(#"{"current":{"accessToken":"#)
            write(string: accessToken)
            if let expires {
                raw(#","expires":"#)
                write(number: expires)
            }
        case .refresh(let refreshToken, let refresh):
            raw(#"{"refresh":{"refreshToken":"#)
            write(string: refreshToken)
            raw(#","tokenRefresh":"#)
            write(refresh)
        }
        raw("}}")
    }

    mutating func write(_ outcome: TokenRefreshOutcome) {
        switch outcome {
        case .refreshed(let accessToken, let refreshToken, let expires):
            raw(#"{"refreshed":{"accessToken":"#)
            write(string: accessToken)
            if let refreshToken {
                raw(#","refreshToken":"#)
                write(string: refreshToken)
            }
            if let expires {
                raw(#","expires":"#)
                write(number: expires)
            }
        case .failed(let revoke):
            raw(#"{"failed":{"revoke":"#)
            write(bool: revoke)
        }
        raw("}}")
    }
}

extension TokenRefreshStep {
    init(json: JSONValue) throws(JSONShapeError) {
        let (name, body) = try json.enumCase(of: ["current", "refresh"])
        do throws(JSONShapeError) {
            switch name {
            case "current":
                self = .current(
                    accessToken: try body.string("accessToken"),
                    expires: try body.optionalDouble("expires")
                )
            default:
                self = .refresh(
                    refreshToken: try body.string("refreshToken"),
                    refresh: try body.required("tokenRefresh", TokenRefresh.init(json:))
                )
            }
        } catch {
            throw error.under(name)
        }
    }

    /// The bytes of its secrets, to reserve room for them escaped.
    var secretBytes: Int {
        switch self {
        case .current(let accessToken, _): accessToken.utf8.count
        case .refresh(let refreshToken, let refresh): refreshToken.utf8.count + refresh.endpoint.utf8.count
        }
    }
}

extension TokenRefreshOutcome {
    init(json: JSONValue) throws(JSONShapeError) {
        let (name, body) = try json.enumCase(of: ["refreshed", "failed"])
        do throws(JSONShapeError) {
            switch name {
            case "refreshed":
                self = .refreshed(
                    accessToken: try body.string("accessToken"),
                    refreshToken: try body.optionalString("refreshToken"),
                    expires: try body.optionalDouble("expires")
                )
            default:
                self = .failed(revoke: try body.bool("revoke"))
            }
        } catch {
            throw error.under(name)
        }
    }

    /// The bytes of its secrets, to reserve room for them escaped.
    var secretBytes: Int {
        switch self {
        case .refreshed(let accessToken, let refreshToken, _): accessToken.utf8.count + (refreshToken?.utf8.count ?? 0)
        case .failed: 0
        }
    }
}
