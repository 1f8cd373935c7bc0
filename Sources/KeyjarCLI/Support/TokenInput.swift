import Foundation

/// The secrets of `keyjar credential add --token-stdin`: the access token on standard input's
/// first line, the refresh token on its second (with `--refresh-token-stdin`). Tokens are
/// printable ASCII without spaces (RFC 6749 §A.12 and §A.17; a Bearer header carries no
/// space), so a line break can only end one.
enum TokenInput {
    static func read(_ data: Data, withRefreshToken: Bool) throws(CLIError) -> (token: String, refreshToken: String?) {
        guard let text = String(data: data, encoding: .utf8) else {
            throw .usage("the token on standard input is not UTF-8 text.")
        }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasSuffix("\r") ? String($0.dropLast()) : String($0)
        }
        // One trailing line break (`echo`, `printf '%s\n'`) ends the last line; it adds no line.
        if lines.last == "" { lines.removeLast() }
        let expected = withRefreshToken ? 2 : 1
        guard lines.count == expected, lines.allSatisfy({ !$0.isEmpty }) else {
            throw .usage(
                withRefreshToken
                    ? "standard input must hold two lines: the access token, then the refresh token."
                    : "standard input must hold one line: the token (add --refresh-token-stdin for a second line)."
            )
        }
        for (line, what) in zip(lines, ["token", "refresh token"])
        where !line.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) {
            throw .usage("the \(what) on standard input has spaces or control characters, which a token cannot hold.")
        }
        return (lines[0], withRefreshToken ? lines[1] : nil)
    }
}
