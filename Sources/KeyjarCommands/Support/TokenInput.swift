package import FoundationEssentials
import KeyjarAuth

/// The secrets of `keyjar credential add --token-stdin`: the access token on standard input's
/// first line, the refresh token on its second (with `--refresh-token-stdin`). Tokens are
/// printable ASCII without spaces, so a line break can only end one.
package enum TokenInput {
    package static func read(
        _ data: Data,
        withRefreshToken: Bool
    ) throws(CLIError) -> (token: String, refreshToken: String?) {
        // Bytes, not Characters: "\r\n" is one Character, which a split at "\n" would not see.
        var lines = [UInt8](data).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map {
            $0.last == UInt8(ascii: "\r") ? Array($0.dropLast()) : Array($0)
        }
        // One trailing line break (`echo`, `printf '%s\n'`) ends the last line; it adds no line.
        if lines.count > 1, lines.last?.isEmpty == true { lines.removeLast() }
        let expected = withRefreshToken ? 2 : 1
        guard lines.count == expected, lines.allSatisfy({ !$0.isEmpty }) else {
            throw .usage(
                withRefreshToken
                    ? "standard input must hold two lines: the access token, then the refresh token."
                    : "standard input must hold one line: the token (add --refresh-token-stdin for a second line)."
            )
        }
        let token = String(decoding: lines[0], as: UTF8.self)
        // The access token goes out as "Authorization: Bearer …" (RFC 6750 §2.1 b64token); the
        // refresh token only in a form body, so any VSCHAR (RFC 6749 §A.17) but a space.
        guard BearerAuthorization.isBearerToken(token) else {
            throw .usage(
                "the token on standard input has characters a bearer token cannot hold "
                    + "(RFC 6750: letters, digits, -._~+/ and = at the end)."
            )
        }
        guard withRefreshToken else { return (token, nil) }
        guard lines[1].allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw .usage(
                "the refresh token on standard input has spaces or control characters, which a token cannot hold."
            )
        }
        return (token, String(decoding: lines[1], as: UTF8.self))
    }
}
