package import ArgumentParser
import FoundationEssentials
package import KeyjarCore
import KeyjarPlatform

/// One `keyjar run --env NAME=URL[#user]`: the environment variable to set, and the stored
/// credential it takes its password or token from (looked up at the URL's origin by Keyjar's
/// matching rule, for `user` when named, else for whoever answers there unasked).
package struct EnvironmentCredential: Sendable, Hashable {
    package var name: String
    package var url: String
    package var user: String?

    /// The space looked up: the URL's scheme, host and port, any realm and method.
    package var space: ProtectionSpace

    /// Reads `NAME=URL[#user]`; the user may also be the URL's (`https://alice@host`).
    package init(parsing text: String) throws(ValidationError) {
        guard let equals = text.firstIndex(of: "=") else {
            throw ValidationError("--env takes NAME=URL[#user], for example GITHUB_TOKEN=https://api.github.com.")
        }
        name = String(text[..<equals])
        guard Self.isVariableName(name) else {
            throw ValidationError(
                "'\(UserInput.shown(name))' is no environment variable name (letters, digits and _, not first a digit)."
            )
        }
        var rest = String(text[text.index(after: equals)...])
        if let hash = rest.lastIndex(of: "#") {
            let named = String(rest[rest.index(after: hash)...])
            guard let decoded = Self.percentDecoded(named), !decoded.isEmpty else {
                throw ValidationError("--env \(name): '#' is followed by a user name.")
            }
            user = decoded
            rest = String(rest[..<hash])
        }
        let parsed: URL
        do {
            parsed = try UserInput.url(rest, example: "https://api.example.com")
        } catch  where text.contains("@") && !rest.contains("@") {
            // The part before '#' may be the start of a password ("https://u:p#ss@host"):
            // nothing of the argument is repeated.
            throw ValidationError("--env \(name): the URL is not a URL with a host, or holds a password.")
        }
        if user == nil, let inURL = parsed.user, !inURL.isEmpty { user = Self.percentDecoded(inURL) ?? inURL }
        url = rest
        space = ProtectionSpace(host: parsed.host ?? "", port: parsed.port, protocol: parsed.scheme ?? "")
    }

    /// POSIX's portable names, which every shell can export.
    static func isVariableName(_ text: String) -> Bool {
        guard let first = text.utf8.first, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(first) else {
            return false
        }
        return text.utf8.allSatisfy { byte in
            byte == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
        }
    }

    /// `%40` as `@`; nil for a broken escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: String) -> String? {
        PercentEncoding.decoded(text.utf8, strict: true).flatMap { String(validating: $0, as: UTF8.self) }
    }
}
