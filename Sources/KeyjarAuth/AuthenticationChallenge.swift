/// One `auth-param` of a challenge (RFC 9110 §11.2): a name and its value, with quoting and
/// backslash escapes already removed.
public struct AuthenticationParameter: Sendable, Hashable {
    /// The name as received; compare it case-insensitively.
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// One challenge of a `WWW-Authenticate` or `Proxy-Authenticate` field (RFC 9110 §11.6.1):
/// a scheme and either a token68 or a list of parameters.
///
/// ```swift
/// let challenge = AuthenticationChallenge(scheme: "Basic", parameters: [.init(name: "realm", value: "admin")])
/// challenge.realm            // "admin"
/// challenge.description      // "Basic realm=\"admin\""
/// ```
public struct AuthenticationChallenge: Sendable, Hashable, CustomStringConvertible {
    /// The scheme as received (`Basic`, `digest`, …); schemes are case-insensitive.
    public var scheme: String
    /// The token68 form (`Negotiate YIIB…`); nil when the challenge has parameters or nothing.
    public var token68: String?
    /// The parameters in the order received, duplicates already dropped by the parser.
    public var parameters: [AuthenticationParameter]

    public init(scheme: String, token68: String? = nil, parameters: [AuthenticationParameter] = []) {
        self.scheme = scheme
        self.token68 = token68
        self.parameters = parameters
    }

    /// Whether the scheme is `name`, ignoring case.
    public func hasScheme(_ name: String) -> Bool { scheme.lowercased() == name.lowercased() }

    /// The value of the first parameter called `name`, ignoring case.
    public func parameter(_ name: String) -> String? {
        let wanted = name.lowercased()
        return parameters.first { $0.name.lowercased() == wanted }?.value
    }

    /// The `realm` parameter.
    public var realm: String? { parameter("realm") }

    /// The challenge as it would appear in a header field: every parameter value quoted, so the
    /// result always parses back to the same challenge.
    public var description: String {
        if let token68 { return "\(scheme) \(token68)" }
        if parameters.isEmpty { return scheme }
        return scheme + " " + parameters.map { "\($0.name)=\(HTTPSyntax.quoted($0.value))" }.joined(separator: ", ")
    }
}
