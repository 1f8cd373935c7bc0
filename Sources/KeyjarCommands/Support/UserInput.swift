package import ArgumentParser
package import FoundationEssentials
import KeyjarCore

/// URLs and domains as people type them, checked once for every command: a bad one is a usage
/// error (exit status 2) that says what was expected, never something stored that cannot match.
package enum UserInput {
    /// The user a token is stored under when nobody names one (`credential add --token-stdin`,
    /// a Bearer token git hands over without a user).
    package static let tokenUser = "token"

    /// A URL cookies can be sent to or set from: http or https (ws and wss too), with a host.
    package static func cookieURL(_ text: String) throws(ValidationError) -> URL {
        try url(text, schemes: ["http", "https", "ws", "wss"])
    }

    /// A URL with a scheme (one of `schemes`, when given), a host unless `file:`, a port in
    /// 1…65535, and never a password.
    package static func url(
        _ text: String,
        schemes: [String]? = nil,
        example: String = "https://example.com/"
    )
        throws(ValidationError) -> URL
    {
        // A URL with user information is not repeated: it could hold a password.
        let shown = text.contains("@") ? "the URL" : "'\(text)'"
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), !scheme.isEmpty else {
            throw ValidationError("\(shown) is not a URL (for example \(example)).")
        }
        if let schemes, !schemes.contains(scheme) {
            throw ValidationError(
                "\(shown) is a \(scheme): URL; this takes \(schemes.map { $0 + ":" }.joined(separator: ", ")) URLs."
            )
        }
        if scheme != "file", (url.host ?? "").isEmpty {
            throw ValidationError("\(shown) has no host (for example \(example)).")
        }
        if let port = url.port, !(1...65_535).contains(port) {
            throw ValidationError("\(shown) has port \(port); a port is a number from 1 to 65535.")
        }
        if url.password != nil {
            throw ValidationError(
                "the URL contains a password; keyjar never takes passwords from arguments (use --password-stdin or the prompt)."
            )
        }
        return url
    }

    /// A domain (`example.com`, `.example.com`, `Bücher.example`, or a URL) as stored: see
    /// `Host.normalisedDomain`.
    package static func domain(_ text: String, option: String = "--domain") throws(ValidationError) -> String {
        guard let domain = Host.normalisedDomain(text) else {
            let wildcard =
                text.contains("*") ? " (a rule for a domain covers its subdomains; no wildcard is needed)" : ""
            throw ValidationError("\(option) '\(shown(text))' is not a domain name\(wildcard).")
        }
        return domain
    }

    /// A user name for a credential: not empty (it could never be told apart or chosen).
    package static func user(_ text: String, option: String = "--user") throws(ValidationError) -> String {
        guard !text.isEmpty else { throw ValidationError("\(option) needs a user name.") }
        return text
    }

    /// An argument repeated in a message: at most 80 characters, control characters escaped
    /// (``TerminalText``).
    package static func shown(_ text: String, limit: Int = 80) -> String {
        TerminalText.excerpt(text, limit: limit)
    }
}
