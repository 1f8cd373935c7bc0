/// A credential as git-credential-libsecret keeps it in the Secret Service (git's
/// `contrib/credential/libsecret`): schema `org.git.Password`, the attributes `protocol`,
/// `server`, `port` (only when git named one), `user` and `object` (the path, with
/// `credential.useHttpPath`), and a secret whose first line is the password, followed since
/// git 2.47 by `password_expiry_utc=SECONDS` and `oauth_refresh_token=TOKEN` lines when git
/// gave them.
///
/// git's helper also keeps items that are no credential for a web server: the passphrase of a
/// client certificate (`http.sslCertPasswordProtected`: `protocol=cert`, an empty `server`,
/// the certificate's file as `object`), and those of git's other protocols (`smtp` for
/// `git send-email`, `imap`). ``read(attributes:secret:)`` tells those apart, to be skipped.
///
/// ```swift
/// let item = try GitLibsecretItem(
///     attributes: ["protocol": "https", "server": "example.com", "user": "alice"],
///     secret: "ghp_token\npassword_expiry_utc=1767225600")
/// item.expires   // 1767225600
/// ```
public struct GitLibsecretItem: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The schema's name, which libsecret stores in each item's `xdg:schema` attribute.
    public static let schema = "org.git.Password"

    /// Why an item cannot be read as a credential. Names the item by its attributes (public),
    /// never by its secret.
    public struct ReadError: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
    }

    /// An item of git's schema, as an import takes it.
    public enum Reading: Sendable, Hashable {
        /// A credential for an http or https server.
        case credential(GitLibsecretItem)
        /// One git stored for something else, named as git would (never by its secret), and why
        /// it is not a credential for a web server.
        case other(item: String, reason: String)
    }

    /// Reads an item of git's schema: a credential for an http or https server, another item
    /// git's helper stores (``Reading/other(item:reason:)``), or an error for an item git's
    /// helper could not have stored (no protocol, no user, a port or expiry that is not a number).
    public static func read(attributes: [String: String], secret: String) throws(ReadError) -> Reading {
        let name = Self.name(attributes)
        let scheme = attributes["protocol"] ?? ""
        // git keeps the scheme of the URL as given; Keyjar's spaces compare it lower-cased.
        switch scheme.lowercased() {
        case "http", "https":
            // git stores no server when its credential has no host (a URL of a path only).
            guard let server = attributes["server"], !server.isEmpty else {
                return .other(item: name, reason: "no server: not a credential for a URL")
            }
        case "cert":
            return .other(
                item: name,
                reason: "the passphrase of a client certificate (http.sslCertPasswordProtected), not a server's"
            )
        case "":
            break  // the init says what is missing
        default:
            return .other(item: name, reason: "protocol \(scheme): Keyjar keeps http and https credentials")
        }
        return .credential(try GitLibsecretItem(attributes: attributes, secret: secret))
    }

    public var `protocol`: String
    public var server: String
    public var port: Int?
    public var user: String
    /// The `object` attribute: a repository path git keeps only with `credential.useHttpPath`.
    public var path: String?
    public var password: String
    /// `password_expiry_utc`, seconds since 1970.
    public var expires: Double?
    /// `oauth_refresh_token`.
    public var refreshToken: String?

    public init(attributes: [String: String], secret: String) throws(ReadError) {
        let name = Self.name(attributes)
        func required(_ key: String) throws(ReadError) -> String {
            guard let value = attributes[key], !value.isEmpty else {
                throw ReadError(description: "git-credential-libsecret item \(name) has no \(key) attribute")
            }
            return value
        }
        `protocol` = try required("protocol")
        server = try required("server")
        // git's helper stores no item without a user, but an empty one is possible.
        guard let user = attributes["user"] else {
            throw ReadError(description: "git-credential-libsecret item \(name) has no user attribute")
        }
        self.user = user
        if let text = attributes["port"], !text.isEmpty {
            guard let port = Int(text), (0...65_535).contains(port) else {
                throw ReadError(description: "git-credential-libsecret item \(name) has a port that is not a number")
            }
            // git stores no port attribute for port 0 ("none"); a 0 read back means none too.
            self.port = port == 0 ? nil : port
        }
        path = attributes["object"].flatMap { $0.isEmpty ? nil : $0 }
        // As the helper reads it: lines split at LF, the first the password, later ones by prefix;
        // unknown lines are ignored (a future git's).
        let lines = secret.split(separator: "\n", omittingEmptySubsequences: false)
        password = lines.first.map(String.init) ?? ""
        for line in lines.dropFirst() {
            if line.hasPrefix("password_expiry_utc=") {
                let value = line.dropFirst("password_expiry_utc=".count)
                guard let seconds = UInt64(value) else {
                    throw ReadError(
                        description:
                            "git-credential-libsecret item \(name) has a password_expiry_utc that is not a number"
                    )
                }
                expires = Double(seconds)
            } else if line.hasPrefix("oauth_refresh_token=") {
                refreshToken = String(line.dropFirst("oauth_refresh_token=".count))
            }
        }
    }

    /// The item as git would name it: `protocol://user@server:port/object`.
    public var description: String {
        Self.name(
            [
                "protocol": `protocol`, "server": server, "port": port.map(String.init) ?? "", "user": user,
                "object": path ?? "",
            ]
        ) + (refreshToken == nil ? "" : " (with a refresh token)")
    }
    public var debugDescription: String { description }

    private static func name(_ attributes: [String: String]) -> String {
        let server = attributes["server"] ?? "?"
        let host = server.contains(":") && !server.hasPrefix("[") ? "[\(server)]" : server
        let port = attributes["port"].flatMap { $0.isEmpty ? nil : ":\($0)" } ?? ""
        // As git's URLs: an empty user (git's for a certificate) names none.
        let user = attributes["user"].flatMap { $0.isEmpty ? nil : "\($0)@" } ?? ""
        let path = attributes["object"].flatMap { $0.isEmpty ? nil : "/\($0)" } ?? ""
        return "\(attributes["protocol"] ?? "?")://\(user)\(host)\(port)\(path)"
    }
}
