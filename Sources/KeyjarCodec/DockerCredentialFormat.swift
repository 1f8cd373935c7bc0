import FoundationEssentials
public import KeyjarCore

/// Docker's credential-helper protocol (docker/docker-credential-helpers, `credentials.go`), as
/// `docker-credential-keyjar` speaks it: the operation is the only argument, and
///
/// - `store` reads `{"ServerURL": …, "Username": …, "Secret": …}` and writes nothing;
/// - `get` reads a server URL (the whole of standard input, spaces trimmed) and writes the
///   same object, or ``notFound`` with status 1;
/// - `erase` reads a server URL; `list` writes `{"<server URL>": "<user>", …}`.
///
/// An error is written to standard output as a line (Docker reads it there) with status 1.
public enum DockerCredentialFormat {
    /// The message Docker's clients recognise as "no credentials" (they then go on without).
    public static let notFound = "credentials not found in native keychain"

    /// Docker Hub's key, under which `docker login` without a server stores its credentials.
    public static let dockerHub = "https://index.docker.io/v1/"

    /// What `store` is given.
    public struct Credential: Sendable, Hashable, CustomStringConvertible {
        public var serverURL: String
        public var username: String
        public var secret: String

        public init(serverURL: String, username: String, secret: String) {
            self.serverURL = serverURL
            self.username = username
            self.secret = secret
        }

        /// Never the secret.
        public var description: String { "\(username) at \(serverURL)" }
    }

    /// Why a message cannot be read; names no secret.
    public struct ReadError: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
    }

    /// `store`'s input.
    public static func readCredential(_ bytes: [UInt8]) throws(ReadError) -> Credential {
        guard let json = JSONReader.parse(bytes) else {
            throw ReadError(description: "the credentials are not a JSON object")
        }
        let credential: Credential
        do {
            credential = Credential(
                serverURL: try json.string("ServerURL"),
                username: try json.string("Username"),
                secret: try json.string("Secret")
            )
        } catch {
            throw ReadError(description: "the credentials are not Docker's {ServerURL, Username, Secret}: \(error)")
        }
        // credentials.go's own checks, with its words.
        if credential.serverURL.trimmingWhitespaceAndNewlines().isEmpty {
            throw ReadError(description: "no credentials server URL")
        }
        if credential.username.isEmpty { throw ReadError(description: "no credentials username") }
        return credential
    }

    /// `get`'s and `erase`'s input: the server URL.
    public static func readServerURL(_ bytes: [UInt8]) throws(ReadError) -> String {
        let text = String(decoding: bytes, as: UTF8.self).trimmingWhitespaceAndNewlines()
        guard !text.isEmpty else { throw ReadError(description: "no credentials server URL") }
        return text
    }

    /// `get`'s output.
    public static func encode(_ credential: Credential) -> [UInt8] {
        JSONValue.object([
            ("ServerURL", .string(credential.serverURL)),
            ("Username", .string(credential.username)),
            ("Secret", .string(credential.secret)),
        ]).encoded() + [0x0A]
    }

    /// `list`'s output: each server URL with its user.
    public static func encode(list: [(serverURL: String, username: String)]) -> [UInt8] {
        JSONValue.object(list.map { ($0.serverURL, JSONValue.string($0.username)) }).encoded() + [0x0A]
    }

    /// The protection space a Docker server URL names: the registry's origin, for any realm and
    /// method (a registry's Basic challenge, and the token service it sends clients to with
    /// the same login). Docker names registries without a scheme (`registry.example:5000`):
    /// those are https. nil for what names no host.
    public static func space(forServerURL serverURL: String) -> ProtectionSpace? {
        let text = serverURL.contains("://") ? serverURL : "https://" + serverURL
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = url.host, !host.isEmpty, url.user == nil
        else { return nil }
        return ProtectionSpace(host: host.lowercased(), port: url.port, protocol: scheme)
    }

    /// How `list` names a space's registry, as Docker keys its own: Docker Hub by its v1 URL,
    /// an https registry as `host` or `host:port`, a plain-http one (an insecure registry) by
    /// its URL. The reverse of ``space(forServerURL:)``.
    public static func serverURL(for space: ProtectionSpace) -> String {
        let host = space.host.contains(":") ? "[\(space.host)]" : space.host
        if space.protocol == "https" {
            if space.host == "index.docker.io" && space.port == 443 { return dockerHub }
            return space.port == 443 ? host : "\(host):\(space.port)"
        }
        return "\(space.protocol)://\(host):\(space.port)"
    }

    /// The registries Docker's own configuration (`config.json`) records a login to: the keys of
    /// its `auths`, which `docker login` writes (without the secret) whatever the store. `list`
    /// names only those, so that Docker never asks for every site's password (the legacy
    /// builder hands every listed login to the daemon, which may be another machine's). Empty
    /// for a file that is no JSON object.
    public static func loggedInRegistries(config bytes: [UInt8]) -> [String] {
        guard let config = JSONReader.parse(bytes), let auths = try? config.optionalMember("auths"),
            let members = try? auths.members()
        else { return [] }
        return members.map(\.key)
    }
}
