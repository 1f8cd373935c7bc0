import Foundation
public import KeyjarCore

/// What git sends a credential helper (gitcredentials(7)): `key=value` lines up to a blank line
/// or the end of the input.
///
/// ```swift
/// let request = try GitCredentialRequest.parse("protocol=https\nhost=example.com:8443\n\n")
/// request.space   // https://example.com:8443, no realm, method default
/// ```
public struct GitCredentialRequest: Sendable, Hashable {
    /// Why the input is not git's credential-helper protocol. Never repeats a password.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
    }

    public var `protocol`: String?
    public var host: String?
    public var port: Int?
    public var username: String?
    public var password: String?
    /// The realm and scheme of the server's challenge, when git passes it on (`wwwauth[]`, git
    /// 2.41 and later): the strongest challenge Keyjar can answer, parsed by ``ChallengeParser``.
    public var realm: String?
    public var method: ProtectionSpace.AuthenticationMethod = .default

    public init() {}

    /// Parses the lines up to the first empty one.
    /// - Throws: ``ParseError`` for a line without `=`, or a `url` that is not a URL with a
    ///   scheme and a host.
    public static func parse(_ text: String) throws(ParseError) -> GitCredentialRequest {
        var request = GitCredentialRequest()
        var challenges: [String] = []
        // "\r\n" is one Character in Swift, so lines split on any newline, CRLF included.
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            if line.isEmpty { break }
            guard let equals = line.firstIndex(of: "=") else {
                throw ParseError(description: "git sent a line without '=': not the credential helper protocol.")
            }
            let key = line[..<equals]
            let value = String(line[line.index(after: equals)...])
            switch key {
            case "protocol": request.protocol = value.lowercased()
            case "host": request.setHost(value)
            case "username": request.username = value
            case "password": request.password = value
            case "url":
                guard let url = URL(string: value), let scheme = url.scheme, let host = url.host, !host.isEmpty else {
                    // The URL may hold a password: it is not repeated.
                    throw ParseError(description: "git sent a url= that is not a URL with a scheme and a host.")
                }
                request.protocol = scheme.lowercased()
                request.host = host
                request.port = url.port
                if let user = url.user { request.username = user }
            case "wwwauth[]": challenges.append(value)
            default: continue
            }
        }
        request.readChallenges(challenges)
        return request
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
        host = String(name)
    }

    /// The strongest challenge among git's `wwwauth[]` values that Keyjar's schemes cover.
    private mutating func readChallenges(_ values: [String]) {
        let parsed = ChallengeParser.parse(values).challenges
        let candidates = ChallengeSelector.candidates(in: parsed, supported: [.basic, .digest, .ntlm, .negotiate])
        guard let selected = candidates.first else { return }
        method = selected.scheme.authenticationMethod
        realm = selected.challenge.realm
    }

    /// Whether the request says which server it is about: a protocol and a host.
    public var namesServer: Bool { !(self.protocol ?? "").isEmpty && !(host ?? "").isEmpty }

    /// The protection space to look a credential up in (no realm and method `default` when
    /// git passed no challenge: any of the server's credentials, by ``CredentialChoice``).
    public var space: ProtectionSpace {
        ProtectionSpace(
            host: host ?? "",
            port: port,
            protocol: `protocol` ?? "",
            realm: realm,
            authenticationMethod: method
        )
    }
}
