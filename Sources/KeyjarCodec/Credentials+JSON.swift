package import KeyjarCore

// The JSON of protection spaces, credential records and mismatches, and of the cookie policy:
// the small values of the wire protocol's credential messages, snapshots and events. Members
// in the order of the types' declarations.

// MARK: Writing

extension JSONWriter {
    package mutating func write(_ space: ProtectionSpace) {
        raw(#"{"host":"#)
        write(string: space.host)
        raw(#","port":"#)
        write(integer: space.port)
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

    package mutating func write(_ record: CredentialRecord) {
        raw(#"{"space":"#)
        write(record.space)
        raw(#","user":"#)
        write(string: record.user)
        raw(#","persistence":"#)
        write(string: record.persistence.rawValue)
        raw(#","isDefault":"#)
        write(bool: record.isDefault)
        raw(#","created":"#)
        write(number: record.created)
        if let lastUsed = record.lastUsed {
            raw(#","lastUsed":"#)
            write(number: lastUsed)
        }
        // The token members (protocol version 4) only when set, so that a password
        // credential's record reads as it always did.
        if let expires = record.expires {
            raw(#","expires":"#)
            write(number: expires)
        }
        if record.hasRefreshToken {
            raw(#","hasRefreshToken":true"#)
        }
        if let refresh = record.tokenRefresh {
            raw(#","tokenRefresh":"#)
            write(refresh)
        }
        if record.isRevoked {
            raw(#","isRevoked":true"#)
        }
        if let modified = record.modified {
            raw(#","modified":"#)
            write(number: modified)
        }
        raw("}")
    }

    package mutating func write(_ refresh: TokenRefresh) {
        raw(#"{"endpoint":"#)
        write(string: refresh.endpoint)
        if let clientID = refresh.clientID {
            raw(#","clientID":"#)
            write(string: clientID)
        }
        raw("}")
    }

    /// A credential to store, secrets included: only ever in a request to keyjard.
    package mutating func write(_ credential: CredentialWrite) {
        raw(#"{"space":"#)
        write(credential.space)
        raw(#","user":"#)
        write(string: credential.user)
        raw(#","password":"#)
        write(string: credential.password)
        raw(#","makeDefault":"#)
        write(bool: credential.makeDefault)
        if let expires = credential.expires {
            raw(#","expires":"#)
            write(number: expires)
        }
        if let refreshToken = credential.refreshToken {
            raw(#","refreshToken":"#)
            write(string: refreshToken)
        }
        if let refresh = credential.tokenRefresh {
            raw(#","tokenRefresh":"#)
            write(refresh)
        }
        if let modified = credential.modified {
            raw(#","modified":"#)
            write(number: modified)
        }
        raw("}")
    }

    package mutating func write(records: [CredentialRecord]) {
        raw("[")
        for (index, record) in records.enumerated() {
            if index > 0 { raw(",") }
            write(record)
        }
        raw("]")
    }

    package mutating func write(_ mismatch: CredentialMismatch) {
        raw(#"{"kind":"#)
        write(string: mismatch.kind.rawValue)
        raw(#","space":"#)
        write(mismatch.space)
        raw(#","user":"#)
        write(string: mismatch.user)
        if let noticed = mismatch.noticed {
            raw(#","noticed":"#)
            write(number: noticed)
        }
        raw("}")
    }

    /// Rules sorted by domain, so that equal policies are equal bytes.
    package mutating func write(_ policy: CookiePolicy) {
        raw(#"{"acceptPolicy":"#)
        write(string: policy.acceptPolicy.rawValue)
        raw(#","domainRules":{"#)
        for (index, rule) in policy.domainRules.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { raw(",") }
            write(string: rule.key)
            raw(":")
            write(string: rule.value.rawValue)
        }
        raw("}}")
    }
}

// MARK: Reading

extension ProtectionSpace {
    /// The fields as written: keyjard and its clients write canonical spaces, and a space is
    /// compared as it was sent.
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(
            verbatimHost: try json.string("host"),
            port: try json.int("port"),
            protocol: try json.string("protocol"),
            realm: try json.optionalString("realm"),
            authenticationMethod: try json.rawValue("authenticationMethod"),
            proxyType: try json.rawValue("proxyType")
        )
    }
}

extension CredentialRecord {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(
            space: try json.required("space", ProtectionSpace.init(json:)),
            user: try json.string("user"),
            persistence: try json.rawValue("persistence"),
            isDefault: try json.bool("isDefault"),
            created: try json.double("created"),
            lastUsed: try json.optionalDouble("lastUsed"),
            expires: try json.optionalDouble("expires"),
            hasRefreshToken: try json.optional("hasRefreshToken") { (value) throws(JSONShapeError) in
                try value.decodeBool()
            } ?? false,
            tokenRefresh: try json.optional("tokenRefresh", TokenRefresh.init(json:)),
            isRevoked: try json.optional("isRevoked") { (value) throws(JSONShapeError) in try value.decodeBool() }
                ?? false,
            modified: try json.optionalDouble("modified")
        )
    }

    package static func array(json: JSONValue) throws(JSONShapeError) -> [CredentialRecord] {
        try json.elements(CredentialRecord.init(json:))
    }
}

extension TokenRefresh {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(endpoint: try json.string("endpoint"), clientID: try json.optionalString("clientID"))
    }
}

extension CredentialWrite {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(
            space: try json.required("space", ProtectionSpace.init(json:)),
            user: try json.string("user"),
            password: try json.string("password"),
            makeDefault: try json.bool("makeDefault"),
            expires: try json.optionalDouble("expires"),
            refreshToken: try json.optionalString("refreshToken"),
            tokenRefresh: try json.optional("tokenRefresh", TokenRefresh.init(json:)),
            modified: try json.optionalDouble("modified")
        )
    }
}

extension CredentialMismatch {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(
            kind: try json.rawValue("kind"),
            space: try json.required("space", ProtectionSpace.init(json:)),
            user: try json.string("user"),
            noticed: try json.optionalDouble("noticed")
        )
    }
}

extension CookiePolicy {
    package init(json: JSONValue) throws(JSONShapeError) {
        let acceptPolicy = try json.rawValue("acceptPolicy", as: CookieAcceptPolicy.self)
        let domainRules = try json.required("domainRules") { (rules) throws(JSONShapeError) in
            var domainRules: [String: CookieDomainAction] = [:]
            for (domain, action) in try rules.members() {
                do throws(JSONShapeError) {
                    domainRules[domain] = try action.decodeRawValue(CookieDomainAction.self)
                } catch {
                    throw error.under(domain)
                }
            }
            return domainRules
        }
        self.init(acceptPolicy: acceptPolicy, domainRules: domainRules)
    }
}
