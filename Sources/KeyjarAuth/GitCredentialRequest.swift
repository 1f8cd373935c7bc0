import FoundationEssentials
public import KeyjarCore

/// What git sends a credential helper (git-credential(1), as of git 2.46): `key=value` lines up
/// to a blank line or the end of the input. Every attribute git documents is read; keys git may
/// add later are ignored, never an error (git asks that of helpers).
///
/// ```swift
/// let request = try GitCredentialRequest.parse("protocol=https\nhost=example.com:8443\n\n")
/// request.space   // https://example.com:8443, no realm, method default
/// ```
public struct GitCredentialRequest: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// Why the input is not git's credential-helper protocol. Never repeats a secret.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
    }

    public var `protocol`: String?
    public var host: String?
    public var port: Int?
    /// The repository's path on the server (only sent with `credential.useHttpPath`).
    public var path: String?
    public var username: String?
    public var password: String?
    /// `password_expiry_utc`: when the password (an access token) stops working, in seconds
    /// since 1970; nil when it never does (git's reading: absent, 0, not a number or too large).
    public var passwordExpiryUTC: Int64?
    /// `oauth_refresh_token`: the OAuth refresh token beside an access-token password. A secret.
    public var oauthRefreshToken: String?
    /// `capability[]`: what git understands beyond the basic protocol. Unknown ones are dropped.
    public var capabilities: Set<GitCredentialCapability> = []
    /// `authtype`: the scheme of a pre-encoded `credential` (`Bearer`, …), or the scheme git is to
    /// use with username and password.
    public var authType: String?
    /// `credential`: a pre-encoded Authorization value (git sends `authtype credential`). A secret.
    public var credential: String?
    /// `ephemeral`: the credential is not to be persisted (a Digest response, a short-lived token).
    public var ephemeral = false
    /// `state[]`: opaque values helpers gave git with their last answer, in order; each helper
    /// reads its own by prefix (Keyjar's: ``GitCredentialState``).
    public var state: [String] = []
    /// `continue`: a non-final step of a multistage authentication.
    public var multistage = false
    /// The server's `WWW-Authenticate` values (`wwwauth[]`, git 2.41 and later), in order.
    public var challenges: [String] = []
    /// The realm and scheme of the strongest challenge Keyjar can answer among ``challenges``,
    /// parsed by ``ChallengeParser``.
    public var realm: String?
    public var method: ProtectionSpace.AuthenticationMethod = .default

    public init() {}

    /// Parses the lines up to the first empty one.
    ///
    /// Lines end at `\n` only, with a `\r` before it dropped, as git's own reader does: a value
    /// may hold any other character, a vertical tab or U+2028 included.
    /// - Throws: ``ParseError`` for a line without `=`, a NUL byte (git cannot send one: such
    ///   input is not git's), or a `url` that is not a URL with a scheme and a host.
    public static func parse(_ text: String) throws(ParseError) -> GitCredentialRequest {
        var request = GitCredentialRequest()
        for rawLine in text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            let line = rawLine.last == UInt8(ascii: "\r") ? rawLine.dropLast() : rawLine[...]
            if line.isEmpty { break }
            // The line is not repeated: it may be a password's.
            if line.contains(0) {
                throw ParseError(description: "git sent a NUL byte: not the credential helper protocol.")
            }
            guard let equals = line.firstIndex(of: UInt8(ascii: "=")) else {
                throw ParseError(description: "git sent a line without '=': not the credential helper protocol.")
            }
            let key = String(decoding: line[..<equals], as: UTF8.self)
            let value = String(decoding: line[line.index(after: equals)...], as: UTF8.self)
            try request.read(key: key, value: value)
        }
        request.readChallenges()
        return request
    }

    private mutating func read(key: String, value: String) throws(ParseError) {
        switch key {
        case "protocol": `protocol` = value.lowercased()
        case "host": setHost(value)
        case "path": path = value
        case "username": username = value
        case "password": password = value
        case "password_expiry_utc": passwordExpiryUTC = Self.timestamp(value)
        case "oauth_refresh_token": oauthRefreshToken = value
        case "authtype": authType = value
        case "credential": credential = value
        case "ephemeral": ephemeral = Self.boolean(value)
        case "continue": multistage = Self.boolean(value)
        // "An empty multi-valued attribute (`key[]=`) acts to clear any previous entries."
        case "capability[]":
            if value.isEmpty {
                capabilities = []
            } else if let capability = GitCredentialCapability(rawValue: value) {
                capabilities.insert(capability)
            }
        case "state[]": if value.isEmpty { state = [] } else { state.append(value) }
        case "wwwauth[]": if value.isEmpty { challenges = [] } else { challenges.append(value) }
        case "url":
            guard let url = URL(string: value), let scheme = url.scheme, let encoded = url.host(percentEncoded: true),
                let host = Host.asciiName(percentEncoded: encoded), !host.isEmpty
            else {
                // The URL may hold a password: it is not repeated.
                throw ParseError(description: "git sent a url= that is not a URL with a scheme and a host.")
            }
            `protocol` = scheme.lowercased()
            self.host = host
            port = url.port
            let urlPath = url.path.hasPrefix("/") ? String(url.path.dropFirst()) : url.path
            if !urlPath.isEmpty { path = urlPath }
            if let user = url.user { username = user }
        default: return
        }
    }

    /// git's reading of `password_expiry_utc` (`parse_timestamp`): the leading decimal digits;
    /// none, 0 or too large means the password never expires.
    private static func timestamp(_ value: String) -> Int64? {
        let digits = value.drop { $0 == " " || $0 == "\t" }.prefix { $0.isASCII && $0.isNumber }
        guard let seconds = Int64(digits), seconds > 0 else { return nil }
        return seconds
    }

    /// git's booleans (`git_config_bool`): true, yes, on or a non-zero number; anything else
    /// (where git would stop with an error) is false, so an odd value never turns a feature on.
    private static func boolean(_ value: String) -> Bool {
        switch value.lowercased() {
        case "true", "yes", "on": true
        default: Int(value).map { $0 != 0 } ?? false
        }
    }

    /// `host` is `name`, `name:port`, or `[v6]:port`.
    private mutating func setHost(_ value: String) {
        var name = Substring(value)
        port = nil
        if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
            let rest = name[name.index(after: close)...]
            port = rest.hasPrefix(":") ? Int(rest.dropFirst()) : nil
            name = name[name.index(after: name.startIndex)..<close]
        } else if let colon = name.lastIndex(of: ":"), let number = Int(name[name.index(after: colon)...]) {
            port = number
            name = name[..<colon]
        }
        host = Self.idna(String(name))
    }

    /// A Unicode host by its IDNA A-labels (`bücher.example` → `xn--bcher-kva.example`), as a
    /// credential added for its URL is stored (``Host/asciiName(_:)``); ASCII as it is, and a
    /// name IDNA refuses as written (it then matches nothing stored).
    private static func idna(_ name: String) -> String {
        Host.asciiName(name) ?? name
    }

    /// The challenges among git's `wwwauth[]` values that Keyjar's schemes cover, strongest
    /// first (``ChallengeSelector``: a Bearer token ranks above a Basic password).
    private var selectedChallenges: [SelectedChallenge] {
        ChallengeSelector.candidates(
            in: ChallengeParser.parse(challenges).challenges,
            supported: [.basic, .digest, .ntlm, .negotiate, .bearer]
        )
    }

    /// The realm and scheme of the strongest challenge.
    private mutating func readChallenges() {
        let selected = selectedChallenges.first
        method = selected?.scheme.authenticationMethod ?? .default
        realm = selected?.challenge.realm
    }

    /// Whether the request says which server it is about: a protocol and a host.
    public var namesServer: Bool { !(self.protocol ?? "").isEmpty && !(host ?? "").isEmpty }

    /// The protection space to look a credential up in (no realm and method `default` when
    /// git passed no challenge: any of the server's credentials, by ``CredentialChoice``).
    public var space: ProtectionSpace { space(realm: realm, method: method) }

    /// The spaces of every challenge Keyjar can answer, strongest first, to look up in turn: a
    /// server that offers Bearer and Basic is answered with a stored password when no token is
    /// stored. Just ``space`` when git passed no challenge.
    public var spaces: [ProtectionSpace] {
        let selected = selectedChallenges
        guard !selected.isEmpty else { return [space] }
        return selected.map { space(realm: $0.challenge.realm, method: $0.scheme.authenticationMethod) }
    }

    /// The server's space with that realm and method.
    public func space(realm: String?, method: ProtectionSpace.AuthenticationMethod) -> ProtectionSpace {
        ProtectionSpace(
            host: host ?? "",
            port: port,
            protocol: `protocol` ?? "",
            realm: realm,
            authenticationMethod: method
        )
    }

    /// Whether git hands over a pre-encoded Bearer token (`authtype=Bearer`, `credential=…`).
    public var bearerToken: String? {
        guard authType?.lowercased() == "bearer", let credential, !credential.isEmpty else { return nil }
        return credential
    }

    /// Keyjar's own `state[]` value, when git passed one back: which stored credential answered
    /// the `get` this `store` or `erase` follows.
    public var keyjarState: GitCredentialState? {
        state.lazy.compactMap(GitCredentialState.init(decoding:)).first
    }

    /// The request without its secrets (password, refresh token, credential).
    public var description: String {
        var parts = ["protocol: \(self.protocol ?? "-")", "host: \(host ?? "-")"]
        if let port { parts.append("port: \(port)") }
        if let username { parts.append("username: \(username)") }
        if password != nil { parts.append("password: <hidden>") }
        if let passwordExpiryUTC { parts.append("password_expiry_utc: \(passwordExpiryUTC)") }
        if oauthRefreshToken != nil { parts.append("oauth_refresh_token: <hidden>") }
        if !capabilities.isEmpty {
            parts.append("capabilities: \(GitCredentialCapability.allCases.filter(capabilities.contains))")
        }
        if let authType { parts.append("authtype: \(authType)") }
        if credential != nil { parts.append("credential: <hidden>") }
        if ephemeral { parts.append("ephemeral") }
        if multistage { parts.append("continue") }
        if !state.isEmpty { parts.append("state: \(state.count) values") }
        return "GitCredentialRequest(\(parts.joined(separator: ", ")))"
    }

    public var debugDescription: String { description }
    /// `dump` and debuggers see the request without its secrets.
    public var customMirror: Mirror {
        Mirror(self, children: ["description": description])
    }
}
