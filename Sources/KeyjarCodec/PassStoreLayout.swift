import FoundationEssentials
public import KeyjarCore
import KeyjarPlatform

/// Where a credential's entry is in a pass store, and which credential an entry is: the
/// layout browserpass and Android Password Store expect, a directory per server and a file per
/// user (`example.com/alice.gpg`), so that they find Keyjar's entries by the site.
///
/// - The directory is the host, with `:port` when the port is not its scheme's default
///   (`intranet.example:8443`); a `.netrc` login for every server is `*`.
/// - The file is the user (`(no user)` for a token stored without one), then, for a space other
///   than a whole https server, what sets it apart in parentheses: `alice (http, digest, realm
///   Admin)`. Names keep `/` and `%` out (`%2F`, `%25`), and never start with a dot.
///
/// An entry's own `url` and `login` fields win over its path: a user's entry filed anywhere
/// (`work/gitlab`) is read by its fields; an entry without them (`pass insert
/// example.com/alice`) by its path.
public enum PassStoreLayout {
    /// The entry's path in the store, without `.gpg`.
    public static func path(of space: ProtectionSpace, user: String) -> String {
        var directory = space.host.contains(":") ? "[\(space.host)]" : space.host
        let defaultPort = ProtectionSpace(host: space.host, protocol: space.protocol, proxyType: space.proxyType).port
        if !space.isWildcard, space.port != defaultPort { directory += ":\(space.port)" }
        var qualifiers: [String] = []
        if space.isWildcard {
            qualifiers.append(
                space.protocol == ProtectionSpace.anySchemeInClearToo ? "any scheme, http too" : "any scheme"
            )
        } else if space.proxyType != .none {
            qualifiers.append("proxy \(space.proxyType.rawValue)")
        } else if space.protocol != "https" {
            qualifiers.append(space.protocol)
        }
        if space.authenticationMethod != .default, let name = PassEntry.methodNames[space.authenticationMethod] {
            qualifiers.append(name)
        }
        if let realm = space.realm { qualifiers.append("realm \(realm)") }
        var file = user.isEmpty ? "(no user)" : user
        if !qualifiers.isEmpty { file += " (" + qualifiers.joined(separator: ", ") + ")" }
        return escaped(directory) + "/" + escaped(file)
    }

    /// The entry's fields for a credential: its server as `url`, its user as `login`, and what
    /// else its space holds.
    public static func entry(
        for record: CredentialRecord,
        password: String,
        refreshToken: String?,
        modified: Double?,
        keeping otherLines: [String] = []
    ) -> PassEntry {
        let space = record.space
        let host = space.host.contains(":") ? "[\(space.host)]" : space.host
        return PassEntry(
            password: password,
            login: record.user,
            url: space.isWildcard ? "\(space.protocol)://\(host)/" : "\(space.protocol)://\(host):\(space.port)/",
            realm: space.realm,
            method: space.authenticationMethod,
            proxy: space.proxyType,
            expires: record.expires,
            refreshToken: refreshToken,
            tokenRefresh: record.tokenRefresh,
            modified: modified,
            otherLines: otherLines
        )
    }

    /// The credential an entry at `path` (without `.gpg`) is: its space and user, or nil for an
    /// entry that names no server (a note, an e-mail password filed by name).
    public static func credential(of entry: PassEntry, at path: String) -> (space: ProtectionSpace, user: String)? {
        // By scalars: a combining mark at the start of a name is one Character with the "/".
        let components = path.unicodeScalars.split(separator: "/").map {
            unescaped(String(String.UnicodeScalarView($0)))
        }
        guard let file = components.last else { return nil }
        let fileUser = file.firstRange(of: " (").map { String(file[..<$0.lowerBound]) } ?? file
        let user = entry.login ?? (fileUser == "(no user)" ? "" : fileUser)
        if let url = entry.url, let wildcard = wildcardSpace(url) { return (wildcard, user) }
        let server: URL
        if let url = entry.url {
            guard let parsed = URL(string: url.contains("://") ? url : "https://" + url) else { return nil }
            server = parsed
        } else {
            // `pass insert example.com/alice`: the directory holding the file is the server.
            guard components.count >= 2, let parsed = URL(string: "https://" + components[components.count - 2]),
                Self.namesAServer(parsed.host ?? "")
            else { return nil }
            server = parsed
        }
        guard let scheme = server.scheme?.lowercased(), var host = server.host, !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        let space = ProtectionSpace(
            host: host,
            port: server.port,
            protocol: scheme,
            realm: entry.realm,
            authenticationMethod: entry.method,
            proxyType: entry.proxy
        )
        return (space, user)
    }

    /// `*://host/` (every scheme and port of the host: a `.netrc` machine) or `*://*/` (every
    /// server), and their `*+clear` forms; nil for any other URL.
    static func wildcardSpace(_ url: String) -> ProtectionSpace? {
        for scheme in [ProtectionSpace.anySchemeInClearToo, ProtectionSpace.anyScheme]
        where url.hasPrefix(scheme + "://") {
            var host = String(url.dropFirst(scheme.count + 3))
            if let slash = host.firstIndex(of: "/") { host = String(host[..<slash]) }
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { return nil }
            let inClearToo = scheme == ProtectionSpace.anySchemeInClearToo
            return host == ProtectionSpace.anyServer.host
                ? ProtectionSpace.anyServer(inClearToo: inClearToo)
                : ProtectionSpace(anySchemeAndPortOf: host, inClearToo: inClearToo)
        }
        return nil
    }

    /// A host name with a dot, `localhost`, or an IP address: what a directory must be to be
    /// read as a server (`email/` is a folder of the user's, not a host).
    static func namesAServer(_ host: String) -> Bool {
        host == "localhost" || host.contains(".") || host.contains(":")
    }

    /// A name as one component of a path: `%`, `/`, control characters (a NUL would end the
    /// path where the system reads it) and a leading `.` written as `%XX`.
    static func escaped(_ name: String) -> String {
        var text = ""
        for (index, scalar) in name.unicodeScalars.enumerated() {
            if scalar == "%" || scalar == "/" || scalar.value < 0x20 || scalar.value == 0x7F
                || (index == 0 && scalar == ".")
            {
                text += "%" + Hex.digits(scalar.value, width: 2, uppercase: true)
            } else {
                text.unicodeScalars.append(scalar)
            }
        }
        return text
    }

    /// The name ``escaped(_:)`` wrote: each `%XX` its byte, in one pass.
    package static func unescaped(_ name: String) -> String {
        String(decoding: PercentEncoding.decoded(name.utf8, strict: false) ?? [], as: UTF8.self)
    }
}
