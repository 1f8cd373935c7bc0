public import Foundation
import FoundationNetworking
import Glibc
import KeyjarCodec

/// What a new download needs to continue a failed or interrupted one: the URL asked for, the
/// entity's validator, and where the bytes received so far are. Its encoding (JSON, versioned)
/// is this type's alone: `LoaderDownload.resumeData` hands it out, the record file beside a
/// destination (`NAME.keyjar-resume`) holds it, so a download killed outright can be continued
/// by the next process.
///
/// How many bytes to continue from is not recorded: it is the partial file's length when the
/// download resumes, which is what was written whatever killed the last one.
public struct DownloadResumeData: Sendable, Hashable {
    /// The URL the download asked for (redirects are followed again).
    public var url: URL
    /// A strong `ETag`, or else the `Last-Modified` date as sent: sent back in `If-Range`, so a
    /// changed entity comes whole instead of its remaining bytes.
    public var validator: String
    /// The destination the partial data is for (its `.keyjar-part` file holds the bytes).
    public var destinationPath: String
    /// Whether the destination may replace an existing file.
    public var allowOverwrite: Bool
    /// The whole entity's length when the server said it.
    public var expectedLength: Int64?

    public init(url: URL, validator: String, destinationPath: String, allowOverwrite: Bool, expectedLength: Int64?) {
        self.url = url
        self.validator = validator
        self.destinationPath = destinationPath
        self.allowOverwrite = allowOverwrite
        self.expectedLength = expectedLength
    }

    /// The file the bytes received so far are written to, beside the destination.
    public var partialPath: String { Self.partialPath(for: destinationPath) }

    public static func partialPath(for destination: String) -> String { destination + ".keyjar-part" }
    public static func recordPath(for destination: String) -> String { destination + ".keyjar-resume" }

    /// The validator of a response that can be resumed with `If-Range`: a strong ETag, else
    /// Last-Modified when there is no ETag at all (RFC 9110 §13.1.5: never a weak tag, and a date
    /// only when no tag exists); nil when the entity cannot be told apart from a changed one.
    static func validator(of response: HTTPURLResponse) -> String? {
        if let tag = response.value(forHTTPHeaderField: "ETag") {
            return tag.hasPrefix("\"") && tag.count >= 2 ? tag : nil
        }
        return response.value(forHTTPHeaderField: "Last-Modified")
    }

    // MARK: The encoding

    static let version = 1

    /// `{"allowOverwrite":…,"destination":…,"expectedLength":…,"url":…,"validator":…,"version":1}`,
    /// members in that order, `expectedLength` left out when unknown.
    public func encoded() -> Data {
        let json = JSONValue.object(omittingAbsent: [
            "allowOverwrite": .bool(allowOverwrite),
            "destination": .string(destinationPath),
            "expectedLength": expectedLength.map(JSONValue.integer),
            "url": .string(url.absoluteString),
            "validator": .string(validator),
            "version": .integer(Self.version),
        ])
        return Data(json.encoded())
    }

    public init(_ data: Data) throws(DownloadResumeDataError) {
        let value: (version: Int, url: String, validator: String, destination: String, allowOverwrite: Bool)
        let expectedLength: Int64?
        guard let json = JSONReader.parse(Array(data)) else {
            throw DownloadResumeDataError(reason: "it is not Keyjar's resume data (not JSON)")
        }
        do throws(JSONShapeError) {
            value = (
                try json.int("version"), try json.string("url"), try json.string("validator"),
                try json.string("destination"), try json.bool("allowOverwrite")
            )
            expectedLength = try json.optionalInteger("expectedLength", as: Int64.self)
        } catch {
            throw DownloadResumeDataError(reason: "it is not Keyjar's resume data (\(error))")
        }
        guard value.version == Self.version else {
            throw DownloadResumeDataError(
                reason: "it is of version \(value.version); this Keyjar reads version \(Self.version)"
            )
        }
        guard let url = URL(string: value.url), url.scheme != nil else {
            throw DownloadResumeDataError(reason: "its URL '\(value.url)' is not a URL")
        }
        guard !value.validator.isEmpty, !value.destination.isEmpty, value.destination.hasPrefix("/") else {
            throw DownloadResumeDataError(reason: "it names no validator or no absolute destination")
        }
        self.init(
            url: url,
            validator: value.validator,
            destinationPath: value.destination,
            allowOverwrite: value.allowOverwrite,
            expectedLength: expectedLength
        )
    }

    // MARK: The record beside a destination

    /// The record left beside `destination` by a download that did not finish, if there is one,
    /// it is for that destination (a record copied from elsewhere could name any file), and its
    /// partial data is still there.
    public static func record(forDestination destination: String) throws(DownloadResumeDataError) -> DownloadResumeData?
    {
        let path = recordPath(for: destination)
        guard let data = ownFile(at: path) else { return nil }
        let record: DownloadResumeData
        do {
            record = try DownloadResumeData(data)
        } catch {
            throw DownloadResumeDataError(reason: "\(path): \(error.reason)")
        }
        guard record.destinationPath == destination, FileManager.default.fileExists(atPath: record.partialPath)
        else { return nil }
        return record
    }

    /// The contents of a record this user wrote: a regular file of the user's, not reached
    /// through a link. One another user planted (in /tmp, beside `-O`'s names) could name any
    /// file as the destination, with overwriting allowed; it is not read.
    private static func ownFile(at path: String) -> Data? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var entry = stat()
        guard fstat(descriptor, &entry) == 0, entry.st_mode & S_IFMT == S_IFREG, entry.st_uid == geteuid() else {
            return nil
        }
        return try? handle.readToEnd() ?? Data()
    }

    /// The records in `directory` of downloads of `url` (newest first), for resuming a download
    /// whose name the server chose.
    public static func records(in directory: String, for url: URL) -> [DownloadResumeData] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(".keyjar-resume") }
            .compactMap { name -> (DownloadResumeData, Date)? in
                let path = (directory as NSString).appendingPathComponent(name)
                guard let data = ownFile(at: path), let record = try? DownloadResumeData(data),
                    record.url == url, record.destinationPath == path.dropLast(".keyjar-resume".count).description,
                    FileManager.default.fileExists(atPath: record.partialPath)
                else { return nil }
                let modified = (try? FileManager.default.attributesOfItem(atPath: path)[.modificationDate]) as? Date
                return (record, modified ?? .distantPast)
            }
            .sorted { $0.1 > $1.1 }
            .map(\.0)
    }
}

/// Resume data that cannot be used, and why.
public struct DownloadResumeDataError: Error, CustomStringConvertible, Sendable {
    public var reason: String
    public var description: String { "The resume data cannot be used: \(reason)." }
}
