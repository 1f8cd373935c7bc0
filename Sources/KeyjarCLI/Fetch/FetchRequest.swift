import Foundation
import FoundationNetworking
import KeyjarCommands

/// The request `keyjar fetch` sends, built from curl-like options and checked before anything
/// is loaded, so that bad input is a usage error and never a half-made request.
struct FetchRequest {
    var url: URL
    var method: String?
    var headers: [(name: String, value: String)] = []
    var body: Data?

    /// One `-H 'Name: value'` argument. The name must be an RFC 9110 token and neither part may
    /// hold a line break (which would smuggle a second field into the request).
    static func header(_ text: String) throws(CLIError) -> (name: String, value: String) {
        guard let colon = text.firstIndex(of: ":") else {
            throw .usage("the header '\(shown(text))' is not 'Name: value'.")
        }
        let name = String(text[..<colon])
        let value = text[text.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        guard !name.isEmpty, name.utf8.allSatisfy(isTokenByte) else {
            throw .usage("the header '\(shown(text))' has no valid field name before its colon.")
        }
        guard !value.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) else {
            throw .usage("the value of header '\(name)' contains a line break or NUL.")
        }
        return (name, value)
    }

    /// `-d` data: text as given, `@FILE` a file's bytes, `@-` standard input. Several `-d`
    /// are joined with `&` as curl does.
    static func body(
        _ arguments: [String],
        readStandardInput: () throws(CLIError) -> Data
    ) throws(CLIError) -> Data? {
        guard !arguments.isEmpty else { return nil }
        var parts: [Data] = []
        for argument in arguments {
            if argument == "@-" {
                parts.append(try readStandardInput())
            } else if argument.hasPrefix("@") {
                let path = String(argument.dropFirst())
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw .failure("cannot read the request body from \(path): \(OutputFile.whyUnreadable(path)).")
                }
                parts.append(data)
            } else {
                parts.append(Data(argument.utf8))
            }
        }
        return parts.dropFirst().reduce(into: parts[0]) { body, part in
            body.append(UInt8(ascii: "&"))
            body.append(part)
        }
    }

    /// The URLRequest: a body without an explicit method is a POST of a form, as with curl.
    func urlRequest(timeout: TimeInterval?, handleCookies: Bool) -> URLRequest {
        var request = URLRequest(url: url)
        if let timeout { request.timeoutInterval = timeout }
        request.httpShouldHandleCookies = handleCookies
        if let body {
            request.httpMethod = "POST"
            request.httpBody = body
            if !headers.contains(where: { $0.name.caseInsensitiveCompare("Content-Type") == .orderedSame }) {
                request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
            }
        }
        if let method { request.httpMethod = method }
        for (name, value) in headers { request.addValue(value, forHTTPHeaderField: name) }
        return request
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// An argument repeated in a message, cut short and without control characters.
    private static func shown(_ text: String) -> String { TerminalText.excerpt(text, limit: 60) }
}
