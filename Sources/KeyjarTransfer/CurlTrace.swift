package import CCurl
import FoundationEssentials
import Glibc
import KeyjarCore

/// `KEYJAR_LOADER_TRACE`: what libcurl says of a transfer, on standard error, for debugging a
/// load — without what carries a secret. The values of the fields that hold credentials and
/// sessions are replaced by `[redacted]`, and bodies (a token endpoint's request and answer, a
/// form's password) and TLS data are never written.
package enum CurlTrace {
    /// The fields whose values are never shown: credentials and sessions.
    static let secretFields: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// libcurl's debug function: text and header lines, redacted; nothing else.
    package static let callback: curl_debug_callback = { _, type, data, size, _ in
        guard let data, size > 0 else { return 0 }
        let text = String(decoding: UnsafeRawBufferPointer(start: data, count: size), as: UTF8.self)
        let line: String
        switch type {
        case CURLINFO_TEXT: line = "* " + text
        case CURLINFO_HEADER_OUT: line = redacted(text, marker: "> ")
        case CURLINFO_HEADER_IN: line = redacted(text, marker: "< ")
        default: return 0
        }
        var bytes = Array(line.utf8)
        if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
        _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        return 0
    }

    /// Header lines (one, or a request's whole block) with each secret field's value replaced,
    /// each line marked as curl marks them.
    package static func redacted(_ block: String, marker: String) -> String {
        // By newline Characters: "\r\n" is one Character in Swift, not a "\r" before a "\n".
        block.split(whereSeparator: \.isNewline).map { line -> String in
            if let colon = line.firstIndex(of: ":"),
                secretFields.contains(line[..<colon].trimmingWhitespace().lowercased())
            {
                return marker + line[..<colon] + ": [redacted]"
            }
            return marker + line
        }.joined(separator: "\n")
    }
}
