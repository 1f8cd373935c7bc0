import KeyjarPlatform

/// The file git's `credential-store` helper keeps (`~/.git-credentials`,
/// `$XDG_CONFIG_HOME/git/credentials`): one credential a line, as a URL
/// `protocol://user:password@host[:port][/path]` whose user, password, host and path are
/// percent-encoded (git-credential-store(1), "STORAGE FORMAT").
///
/// Read as git's `credential_from_url_gently` reads a line: the scheme ends at the first `://`,
/// the host at the first `/`, `?` or `#`; user and password are split at the first `:` before the
/// first `@`; `%XX` is decoded (but `%00`, and a `%` without two hex digits, stay as they are).
/// Empty lines and `#` comments are skipped (git ignores them too, though it never writes them);
/// any other line git could not use is an error here, where git would skip it in silence.
///
/// ```swift
/// let entries = try GitCredentialsFile.parse("https://alice:s%40cret@example.com\n")
/// entries[0].password   // "s@cret"
/// ```
public enum GitCredentialsFile {
    /// One line's credential.
    public struct Entry: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
        /// The scheme as written (git compares it exactly; Keyjar's space lower-cases it).
        public var `protocol`: String
        /// The host name, without brackets for an IPv6 address and without the port.
        public var host: String
        /// The port written after the host, if any.
        public var port: Int?
        public var user: String
        public var password: String
        /// The repository path, kept by git only with `credential.useHttpPath`.
        public var path: String?
        public var line: Int

        public init(
            protocol: String,
            host: String,
            port: Int? = nil,
            user: String,
            password: String,
            path: String? = nil,
            line: Int
        ) {
            self.protocol = `protocol`
            self.host = host
            self.port = port
            self.user = user
            self.password = password
            self.path = path
            self.line = line
        }

        public var description: String {
            let host = host.contains(":") ? "[\(host)]" : host
            let port = port.map { ":\($0)" } ?? ""
            let path = path.map { "/\($0)" } ?? ""
            return "line \(line): \(`protocol`)://\(user):<hidden>@\(host)\(port)\(path)"
        }
        public var debugDescription: String { description }
    }

    /// Why a line is not a credential git could use. Never repeats the line: it holds a password.
    public struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        public enum Reason: Sendable, Hashable {
            /// No `scheme://` at the start.
            case noScheme
            /// No `user:password@` before the host.
            case noUserAndPassword
            /// Nothing between the `@` and the path.
            case noHost
            /// A port after the host that is not a number from 1 to 65535.
            case invalidPort
            /// A user, password, host or path that is not UTF-8 once decoded, or holds a NUL or a
            /// newline (which git refuses too).
            case invalidComponent(String)
        }

        public let line: Int
        public let reason: Reason

        public init(line: Int, reason: Reason) {
            self.line = line
            self.reason = reason
        }

        public var description: String {
            let message =
                switch reason {
                case .noScheme: "not a URL with a scheme (protocol://user:password@host)"
                case .noUserAndPassword: "no user:password@ before the host"
                case .noHost: "no host after the @"
                case .invalidPort: "the port after the host is not a number from 1 to 65535"
                case .invalidComponent(let name):
                    "the \(name) is not UTF-8 text once decoded, or holds a control character"
                }
            return "line \(line): \(message)"
        }
    }

    /// Reads every line's credential, in the file's order (git answers with the first match).
    /// - Throws: ``ParseError`` for the first line that is not a credential.
    public static func parse(_ text: String) throws(ParseError) -> [Entry] {
        var entries: [Entry] = []
        // git reads lines up to LF; a CR before it (a file edited on Windows) would end up in the
        // host or path, where git would never match it: dropped here.
        for (index, rawLine) in text.utf8.split(separator: newline, omittingEmptySubsequences: false).enumerated() {
            var line = rawLine[...]
            if line.last == carriageReturn { line = line.dropLast() }
            let content = line.drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            if content.isEmpty || content.first == UInt8(ascii: "#") { continue }
            entries.append(try parseLine(Array(line), line: index + 1))
        }
        return entries
    }

    private static func parseLine(_ bytes: [UInt8], line: Int) throws(ParseError) -> Entry {
        guard let schemeEnd = firstRange(of: Array("://".utf8), in: bytes), schemeEnd > 0 else {
            throw ParseError(line: line, reason: .noScheme)
        }
        let scheme = bytes[..<schemeEnd]
        let rest = bytes[(schemeEnd + 3)...]
        let hostEnd =
            rest.firstIndex { $0 == slash || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? rest.endIndex
        // As git: the first `@` and the first `:` of the whole remainder.
        guard let at = rest.firstIndex(of: UInt8(ascii: "@")), at < hostEnd,
            let colon = rest.firstIndex(of: UInt8(ascii: ":")), colon < at
        else { throw ParseError(line: line, reason: .noUserAndPassword) }
        let user = try text(decoding: rest[rest.startIndex..<colon], line: line, name: "user")
        let password = try text(decoding: rest[(colon + 1)..<at], line: line, name: "password")
        let hostAndPort = try text(decoding: rest[(at + 1)..<hostEnd], line: line, name: "host")
        var pathStart = hostEnd
        while pathStart < rest.endIndex, rest[pathStart] == slash { pathStart += 1 }
        var pathEnd = rest.endIndex
        while pathEnd > pathStart, rest[pathEnd - 1] == slash { pathEnd -= 1 }
        let path = pathStart < pathEnd ? try text(decoding: rest[pathStart..<pathEnd], line: line, name: "path") : nil
        let (host, port) = try splitPort(hostAndPort, line: line)
        guard !host.isEmpty else { throw ParseError(line: line, reason: .noHost) }
        return Entry(
            protocol: String(decoding: scheme, as: UTF8.self),
            host: host,
            port: port,
            user: user,
            password: password,
            path: path,
            line: line
        )
    }

    /// git's host field: `name`, `name:port` or `[v6]:port` (the port encoded or not).
    private static func splitPort(_ value: String, line: Int) throws(ParseError) -> (String, Int?) {
        var name = Substring(value)
        var portText: Substring?
        if name.hasPrefix("["), let close = name.firstIndex(of: "]") {
            let after = name[name.index(after: close)...]
            if after.hasPrefix(":") {
                portText = after.dropFirst()
            } else if !after.isEmpty {
                throw ParseError(line: line, reason: .invalidPort)
            }
            name = name[name.index(after: name.startIndex)..<close]
        } else if let colon = name.lastIndex(of: ":") {
            portText = name[name.index(after: colon)...]
            name = name[..<colon]
        }
        guard let portText else { return (String(name), nil) }
        guard portText.allSatisfy(\.isASCII), let port = Int(portText), (1...65_535).contains(port) else {
            throw ParseError(line: line, reason: .invalidPort)
        }
        return (String(name), port)
    }

    /// `%XX` decoded as git's `url_decode_mem` does, then checked to be text git would accept.
    private static func text(decoding bytes: ArraySlice<UInt8>, line: Int, name: String) throws(ParseError) -> String {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%"), index + 2 < bytes.endIndex,
                let high = Hex.value(of: bytes[index + 1]), let low = Hex.value(of: bytes[index + 2]), high | low != 0
            {
                decoded.append(high << 4 | low)
                index += 3
                continue
            }
            decoded.append(byte)
            index += 1
        }
        guard let text = String(validating: decoded, as: UTF8.self),
            !decoded.contains(where: { $0 == 0 || $0 == newline || $0 == carriageReturn })
        else { throw ParseError(line: line, reason: .invalidComponent(name)) }
        return text
    }

    private static func firstRange(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    private static let newline = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")
    private static let slash = UInt8(ascii: "/")
}
