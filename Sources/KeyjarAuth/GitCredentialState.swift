public import KeyjarCore
import KeyjarPlatform

/// Which stored credential answered git's `get`, as Keyjar's `state[]` value: git hands it back
/// with the `store` or `erase` that follows (git 2.46's `state` capability), so that they act on
/// exactly that credential. Names a space and a user, never a secret.
///
/// The value is `keyjar:1?` and `name=value` pairs joined by `&` (protocol, host, port, realm when
/// there is one, method, proxy, user), each value percent-encoded down to RFC 3986's unreserved
/// characters: one line of ASCII, whatever the realm or user holds.
///
/// ```swift
/// let state = GitCredentialState(space: ProtectionSpace(host: "example.com", protocol: "https"), user: "alice")
/// state.encoded   // "keyjar:1?protocol=https&host=example.com&port=443&method=default&proxy=none&user=alice"
/// GitCredentialState(decoding: state.encoded) == state   // true
/// ```
public struct GitCredentialState: Sendable, Hashable {
    /// What every Keyjar state value starts with; git-credential(1) asks each helper to use a
    /// prefix of its own and to ignore other helpers' values.
    public static let prefix = "keyjar:"
    private static let versionedPrefix = "keyjar:1?"

    public var space: ProtectionSpace
    public var user: String

    public init(space: ProtectionSpace, user: String) {
        self.space = space
        self.user = user
    }

    public var encoded: String {
        var pairs: [(String, String)] = [
            ("protocol", space.protocol), ("host", space.host), ("port", String(space.port)),
        ]
        if let realm = space.realm { pairs.append(("realm", realm)) }
        pairs += [
            ("method", space.authenticationMethod.rawValue), ("proxy", space.proxyType.rawValue), ("user", user),
        ]
        return Self.versionedPrefix + pairs.map { "\($0)=\(Self.percentEncoded($1))" }.joined(separator: "&")
    }

    /// Reads a value Keyjar wrote; nil for another helper's value or one that is not well formed
    /// (a missing or repeated field, an unknown method, a bad escape), which is then ignored.
    public init?(decoding value: String) {
        guard value.hasPrefix(Self.versionedPrefix) else { return nil }
        var fields: [String: String] = [:]
        for pair in value.dropFirst(Self.versionedPrefix.count).split(separator: "&", omittingEmptySubsequences: false)
        {
            guard let equals = pair.firstIndex(of: "="),
                let decoded = Self.percentDecoded(pair[pair.index(after: equals)...]),
                fields.updateValue(decoded, forKey: String(pair[..<equals])) == nil
            else { return nil }
        }
        guard let scheme = fields["protocol"], let host = fields["host"], let user = fields["user"],
            let port = fields["port"].flatMap({ Int($0) }),
            let method = fields["method"].flatMap(ProtectionSpace.AuthenticationMethod.init(rawValue:)),
            let proxy = fields["proxy"].flatMap(ProtectionSpace.ProxyType.init(rawValue:)),
            Set(fields.keys).isSubset(of: ["protocol", "host", "port", "realm", "method", "proxy", "user"])
        else { return nil }
        if ProtectionSpace.isWildcard(protocol: scheme) {
            // A .netrc credential: every scheme and port of a host, or every server.
            guard port == 0, fields["realm"] == nil, method == .default, proxy == .none, !host.isEmpty else {
                return nil
            }
            let inClearToo = scheme == ProtectionSpace.anySchemeInClearToo
            self.init(
                space: host == "*"
                    ? .anyServer(inClearToo: inClearToo)
                    : ProtectionSpace(anySchemeAndPortOf: host, inClearToo: inClearToo),
                user: user
            )
            return
        }
        guard port > 0 else { return nil }
        self.init(
            space: ProtectionSpace(
                host: host,
                port: port,
                protocol: scheme,
                realm: fields["realm"],
                authenticationMethod: method,
                proxyType: proxy
            ),
            user: user
        )
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    private static func percentEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        for byte in text.utf8 {
            if isUnreserved(byte) {
                bytes.append(byte)
            } else {
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// nil for a character that encoding never writes, a broken escape, or bytes that are not UTF-8.
    private static func percentDecoded(_ text: Substring) -> String? {
        guard text.utf8.allSatisfy({ isUnreserved($0) || $0 == UInt8(ascii: "%") }),
            let bytes = PercentEncoding.decoded(text.utf8, strict: true)
        else { return nil }
        return String(validating: bytes, as: UTF8.self)
    }
}
