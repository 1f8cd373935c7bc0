package import ArgumentParser
package import FoundationEssentials
package import KeyjarCore

/// A protection space on the command line: `--url` (scheme, host, port), `--realm`,
/// `--method`, and `--proxy` for a proxy's space.
///
/// Adding a credential builds the space exactly (no realm and method `default` when not
/// given). Every other command uses the options as a filter, an option left out matching
/// anything, so `keyjar credential show --url https://example.com` finds the credential
/// whatever its realm.
package struct SpaceOptions: ParsableArguments {
    package init() {}

    @Option(
        help: ArgumentHelp(
            "The server as a URL: scheme, host and port (a path is ignored); with --proxy, the proxy's.",
            valueName: "url"
        )
    )
    package var url: String?

    @Option(help: ArgumentHelp("The realm the server names in its challenge.", valueName: "realm"))
    package var realm: String?

    @Option(help: ArgumentHelp("The authentication method.", valueName: "method"))
    package var method: MethodArgument?

    @Option(help: ArgumentHelp("A proxy's space, of this proxy type.", valueName: "type"))
    package var proxy: ProxyArgument?

    package func validate() throws {
        if let url { _ = try Self.parse(url) }
        if realm?.isEmpty == true {
            throw ValidationError("--realm needs a realm; leave it out for a credential that answers any realm.")
        }
    }

    /// The URL, checked: a scheme, a host, a valid port, and never a password.
    package static func parse(_ text: String) throws(ValidationError) -> URL {
        try UserInput.url(text, example: "https://example.com")
    }

    /// The user named in the URL (`https://alice@example.com`), if any.
    package var userFromURL: String? { url.flatMap { try? Self.parse($0) }?.user }

    /// The exact space for storing a credential.
    package func exactSpace() throws -> ProtectionSpace {
        guard let url else { throw CLIError.usage("--url is required.") }
        let parsed = try Self.parse(url)
        return ProtectionSpace(
            host: parsed.host ?? "",
            port: parsed.port,
            protocol: parsed.scheme ?? "",
            realm: realm,
            authenticationMethod: method?.method ?? .default,
            proxyType: proxy?.proxyType ?? .none
        )
    }

    /// Whether a stored space is one the options describe.
    package func matches(_ space: ProtectionSpace) -> Bool {
        if let url, let parsed = try? Self.parse(url) {
            let wanted = ProtectionSpace(
                host: parsed.host ?? "",
                port: parsed.port,
                protocol: parsed.scheme ?? "",
                proxyType: proxy?.proxyType ?? .none
            )
            guard space.host == wanted.host, space.port == wanted.port, space.protocol == wanted.protocol,
                space.proxyType == wanted.proxyType
            else { return false }
        } else if let proxy, space.proxyType != proxy.proxyType {
            return false
        }
        if let realm, space.realm != realm { return false }
        if let method, space.authenticationMethod != method.method { return false }
        return true
    }
}

extension ProtectionSpace {
    /// `https://example.com:443`, or `proxy http://proxy.example:3128`.
    package var displayURL: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        // A `.netrc` login's space has no one scheme or port: `*://host` (`*://*` for `default`).
        if isWildcard { return "\(ProtectionSpace.anyScheme)://\(shownHost)" }
        let address = "\(self.protocol)://\(shownHost):\(port)"
        return isProxy ? "proxy \(address)" : address
    }

    /// The space in one line, for messages and listings.
    package var summary: String {
        var text = displayURL
        if isWildcard {
            text += isEveryServer ? " (every server" : " (every scheme and port"
            text += goesInClearToo ? ", http too)" : "; http only to this machine)"
        }
        // A realm is the server's words.
        if let realm { text += " realm \"\(TerminalText.safe(realm))\"" }
        text += " method \(MethodArgument(authenticationMethod).rawValue)"
        return text
    }
}
