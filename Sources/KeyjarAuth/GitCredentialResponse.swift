/// A capability of git's credential-helper protocol (git-credential(1), git 2.46): extra
/// attributes a side may only send when the other announced that it understands them.
public enum GitCredentialCapability: String, Sendable, Hashable, CaseIterable {
    /// `authtype`, `credential` and `ephemeral`.
    case authtype
    /// `state[]` and `continue`.
    case state

    /// The answer to `keyjar git-credential capability` (git's `git credential capability`
    /// format): the protocol version, then each capability Keyjar implements.
    public static var announcement: String {
        (["version 0"] + allCases.map { "capability \($0.rawValue)" }).map { $0 + "\n" }.joined()
    }
}

/// A credential helper's answer to git: the one place where Keyjar writes git's credential
/// protocol, so its rules hold for every answer. Capabilities come first and only those git
/// announced (``init(answering:)``); an attribute that needs a capability git did not announce
/// is left out, as git itself does; a value git cannot carry (a line break or NUL) is an error,
/// never a truncated or split secret.
///
/// ```swift
/// var response = GitCredentialResponse(answering: request)   // request announced authtype
/// response.authType = "Bearer"
/// response.credential = token
/// try response.encoded()   // "capability[]=authtype\nauthtype=Bearer\ncredential=…\n"
/// ```
public struct GitCredentialResponse: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// Why an answer cannot be written. Names the attribute, never its value.
    public struct EncodingError: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
    }

    /// What the answer may use: the capabilities git announced (and Keyjar implements).
    public var capabilities: Set<GitCredentialCapability>
    public var username: String?
    public var password: String?
    /// `password_expiry_utc`, seconds since 1970.
    public var passwordExpiryUTC: Int64?
    public var oauthRefreshToken: String?
    /// Needs the `authtype` capability.
    public var authType: String?
    /// A pre-encoded Authorization value; needs the `authtype` capability and an ``authType``.
    public var credential: String?
    /// Needs the `authtype` capability.
    public var ephemeral = false
    /// Needs the `state` capability.
    public var state: [String] = []
    /// `continue`; needs the `state` capability.
    public var multistage = false

    public init(capabilities: Set<GitCredentialCapability> = []) {
        self.capabilities = capabilities
    }

    /// An empty answer that may use exactly what `request` announced.
    public init(answering request: GitCredentialRequest) {
        self.init(capabilities: request.capabilities)
    }

    /// git's longest line, its newline included (git-credential(1)).
    public static let maximumLineLength = 65535

    /// The lines for git, in git's own order (capabilities first); empty when there is nothing to
    /// answer, capabilities alone are no answer.
    /// - Throws: ``EncodingError`` for a value with a line feed, carriage return or NUL (git
    ///   cannot carry it; a carriage return is dropped at a line end, and refused by git since its
    ///   security releases of January 2025, 2.46.3 among them), a line longer than
    ///   git's limit, or a `credential` without an `authtype`.
    public func encoded() throws(EncodingError) -> String {
        let authtype = capabilities.contains(.authtype)
        let state = capabilities.contains(.state)
        var fields: [(key: String, value: String)] = []
        if authtype {
            if credential != nil, authType == nil {
                throw EncodingError(description: "a credential= answer needs an authtype=.")
            }
            if let authType { fields.append(("authtype", authType)) }
            if let credential { fields.append(("credential", credential)) }
            if ephemeral { fields.append(("ephemeral", "1")) }
        }
        if let username { fields.append(("username", username)) }
        if let password { fields.append(("password", password)) }
        if let oauthRefreshToken { fields.append(("oauth_refresh_token", oauthRefreshToken)) }
        if let passwordExpiryUTC { fields.append(("password_expiry_utc", String(passwordExpiryUTC))) }
        if state {
            if multistage { fields.append(("continue", "1")) }
            fields += self.state.map { ("state[]", $0) }
        }
        guard !fields.isEmpty else { return "" }
        let announced = GitCredentialCapability.allCases.filter(capabilities.contains).map {
            (key: "capability[]", value: $0.rawValue)
        }
        var text = ""
        for (key, value) in announced + fields {
            if value.utf8.contains(where: { $0 == 0x0A || $0 == 0x0D || $0 == 0 }) {
                throw EncodingError(
                    description:
                        "the \(key) value holds a line break or NUL, which git's credential protocol cannot carry."
                )
            }
            if key.utf8.count + 1 + value.utf8.count + 1 > Self.maximumLineLength {
                throw EncodingError(
                    description:
                        "the \(key) value is longer than git's credential protocol allows (\(Self.maximumLineLength) bytes a line)."
                )
            }
            text += "\(key)=\(value)\n"
        }
        return text
    }

    /// The answer without its secrets.
    public var description: String {
        var parts: [String] = ["capabilities: \(GitCredentialCapability.allCases.filter(capabilities.contains))"]
        if let username { parts.append("username: \(username)") }
        if password != nil { parts.append("password: <hidden>") }
        if let passwordExpiryUTC { parts.append("password_expiry_utc: \(passwordExpiryUTC)") }
        if oauthRefreshToken != nil { parts.append("oauth_refresh_token: <hidden>") }
        if let authType { parts.append("authtype: \(authType)") }
        if credential != nil { parts.append("credential: <hidden>") }
        if ephemeral { parts.append("ephemeral") }
        if multistage { parts.append("continue") }
        parts += state.map { "state[]: \($0)" }
        return "GitCredentialResponse(\(parts.joined(separator: ", ")))"
    }

    public var debugDescription: String { description }
    /// `dump` and debuggers see the answer without its secrets.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description])
    }
}
