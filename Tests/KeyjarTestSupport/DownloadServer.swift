public import Foundation
import Glibc

/// lighttpd from Debian's packages serving files for download tests: byte ranges and
/// `If-Range` (its own implementation), `Content-Disposition` of every kind, an encoded file,
/// a rate-limited directory (so a download can be interrupted midway; a request with a `Range`,
/// which resumes one, is not limited), and an access log that
/// records each request's `Range`, `If-Range` and the body bytes sent.
///
/// Paths: `/files/NAME` as written by `put`; `/slow/NAME` the same files at
/// `slowKilobytesPerSecond`; `/disposition/KIND` where KIND is `quoted`, `extended`, `traversal`,
/// `inline` or `report` (the file is the same, the field differs).
public final class DownloadServer: Sendable {
    public let port: Int
    private let pid: Int32
    public let directory: String

    public static let dispositions: [String: String] = [
        "quoted": #"attachment; filename=\"report.pdf\""#,
        "extended": #"attachment; filename=\"resume.pdf\"; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf"#,
        "traversal": #"attachment; filename=\"../../etc/passwd\""#,
        "inline": "inline",
    ]

    public init(slowKilobytesPerSecond: Int = 128) async throws {
        directory = NSTemporaryDirectory() + "keyjar-downloads-\(UUID().uuidString.prefix(8))"
        let root = "\(directory)/www"
        for path in ["files", "disposition"] {
            try FileManager.default.createDirectory(atPath: "\(root)/\(path)", withIntermediateDirectories: true)
        }
        try FileManager.default.createSymbolicLink(atPath: "\(root)/slow", withDestinationPath: "\(root)/files")
        for kind in Self.dispositions.keys {
            try Data("the disposition file\n".utf8).write(to: URL(fileURLWithPath: "\(root)/disposition/\(kind)"))
        }
        let headers = Self.dispositions.map { kind, value in
            "$HTTP[\"url\"] == \"/disposition/\(kind)\" { setenv.set-response-header = (\"Content-Disposition\" => \"\(value)\") }"
        }
        let directory = self.directory
        (port, pid) = try await spawnOnFreePort(name: "lighttpd", log: "\(directory)/error.log") { candidate in
            let configuration = """
                server.document-root = "\(root)"
                server.port = \(candidate)
                server.bind = "127.0.0.1"
                server.modules = ("mod_setenv", "mod_accesslog")
                server.errorlog = "\(directory)/error.log"
                server.follow-symlink = "enable"
                # A replaced file must get its new ETag at once, not after the stat cache expires.
                server.stat-cache-engine = "disable"
                accesslog.filename = "\(directory)/access.log"
                accesslog.format = "%r %s %b \\"%{Range}i\\" \\"%{If-Range}i\\""
                mimetype.assign = (
                    ".gz" => "application/gzip", ".hqx" => "application/mac-binhex40",
                    ".txt" => "text/plain", "" => "application/octet-stream"
                )
                # Slow until interrupted: a resumed request (it has a Range) comes at full speed.
                $HTTP["url"] =~ "^/slow/" {
                    $REQUEST_HEADER["Range"] == "" { connection.kbytes-per-second = \(slowKilobytesPerSecond) }
                }
                \(headers.joined(separator: "\n"))
                """
            try Data(configuration.utf8).write(to: URL(fileURLWithPath: "\(directory)/lighttpd.conf"))
            return ("/usr/sbin/lighttpd", ["-D", "-f", "\(directory)/lighttpd.conf"])
        }
    }

    deinit {
        kill(pid, SIGKILL)
        try? FileManager.default.removeItem(atPath: directory)
    }

    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Writes (or replaces, which gives it a new ETag) `/files/NAME`.
    public func put(_ data: Data, as name: String) throws {
        let path = "\(directory)/www/files/\(name)"
        // A new inode and modification time: lighttpd's ETag changes even within one second.
        try? FileManager.default.removeItem(atPath: path)
        try data.write(to: URL(fileURLWithPath: path))
        var times = [timespec(tv_sec: time(nil) + 7, tv_nsec: 0), timespec(tv_sec: time(nil) + 7, tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    /// One request as the access log recorded it.
    public struct LoggedRequest: Sendable, Equatable {
        public var requestLine: String
        public var status: Int
        public var bodyBytes: Int
        public var range: String?
        public var ifRange: String?
    }

    /// The requests logged so far for `path`. lighttpd writes its log in batches: this waits
    /// until at least `count` are there (or `hangDeadline` passed).
    public func requests(for path: String, atLeast count: Int) async -> [LoggedRequest] {
        var found: [LoggedRequest] = []
        _ = await eventually(every: .milliseconds(20)) {
            found = loggedRequests().filter { $0.requestLine.contains(" \(path) ") }
            return found.count >= count
        }
        return found
    }

    private func loggedRequests() -> [LoggedRequest] {
        guard let text = try? String(contentsOfFile: "\(directory)/access.log", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").compactMap { line in
            // GET /path HTTP/1.1 206 1234 "bytes=10-" "\"etag\""
            let words = line.split(separator: " ", maxSplits: 5).map(String.init)
            guard words.count == 6, let status = Int(words[3]), let bytes = Int(words[4]) else { return nil }
            let quoted = words[5]
            guard quoted.hasPrefix("\""), let close = quoted.dropFirst().firstIndex(of: "\"") else { return nil }
            let range = String(quoted[quoted.index(after: quoted.startIndex)..<close])
            var ifRange = quoted[quoted.index(after: close)...].trimmingCharacters(in: .whitespaces)
            if ifRange.hasPrefix("\""), ifRange.hasSuffix("\""), ifRange.count >= 2 {
                ifRange = String(ifRange.dropFirst().dropLast())
            }
            ifRange = ifRange.replacingOccurrences(of: "\\\"", with: "\"")
            return LoggedRequest(
                requestLine: words[0...2].joined(separator: " "),
                status: status,
                bodyBytes: bytes,
                range: range == "-" ? nil : range,
                ifRange: ifRange == "-" ? nil : ifRange
            )
        }
    }
}
