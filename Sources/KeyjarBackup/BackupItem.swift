package import KeyjarCodec
public import KeyjarCore

/// One item of a backup, one JSON line of its plaintext: the policy, a cookie, a credential
/// with its secrets, and last the counts (which a reader checks, so that nothing between is
/// missing).
public enum BackupItem: Sendable, Hashable {
    case policy(CookiePolicy)
    case cookie(Cookie)
    case credential(BackedUpCredential)
    case end(cookies: Int, credentials: Int)

    static let cases = ["policy", "cookie", "credential", "end"]

    /// The item's line, newline included.
    package var encodedLine: [UInt8] {
        var writer = JSONWriter()
        switch self {
        case .policy(let policy):
            writer.raw(#"{"policy":"#)
            writer.write(policy)
        case .cookie(let cookie):
            writer.raw(#"{"cookie":"#)
            writer.write(cookie)
        case .credential(let credential):
            writer.raw(#"{"credential":{"record":"#)
            writer.write(credential.record)
            writer.raw(#","password":"#)
            writer.write(string: credential.password)
            if let refreshToken = credential.refreshToken {
                writer.raw(#","refreshToken":"#)
                writer.write(string: refreshToken)
            }
            writer.raw("}")
        case .end(let cookies, let credentials):
            writer.raw(#"{"end":{"cookies":"#)
            writer.write(integer: cookies)
            writer.raw(#","credentials":"#)
            writer.write(integer: credentials)
            writer.raw("}")
        }
        writer.raw("}\n")
        return writer.bytes
    }

    /// Reads one line (without its newline); the error names what is wrong, never a value.
    package init(line: [UInt8]) throws(JSONShapeError) {
        guard let json = JSONReader.parse(line) else { throw .wrongType }
        let (name, body) = try json.enumCase(of: Self.cases)
        do throws(JSONShapeError) {
            switch name {
            case "policy": self = .policy(try CookiePolicy(json: body))
            case "cookie": self = .cookie(try Cookie(json: body))
            case "credential":
                self = .credential(
                    BackedUpCredential(
                        record: try body.required("record", CredentialRecord.init(json:)),
                        password: try body.string("password"),
                        refreshToken: try body.optionalString("refreshToken")
                    )
                )
            default: self = .end(cookies: try body.int("cookies"), credentials: try body.int("credentials"))
            }
        } catch {
            throw error.under(name)
        }
    }
}

/// A credential as a backup keeps it: its record and its secrets.
public struct BackedUpCredential: Sendable, Hashable, CustomStringConvertible {
    public var record: CredentialRecord
    public var password: String
    public var refreshToken: String?

    public init(record: CredentialRecord, password: String, refreshToken: String?) {
        self.record = record
        self.password = password
        self.refreshToken = refreshToken
    }

    /// Never the secrets.
    public var description: String { "BackedUpCredential(\(record.user) at \(record.space.host))" }
}
