public import Foundation
import KeyjarCodec
public import KeyjarHTTPCache

/// Where a response may be kept (the URL Loading System's storage policies).
public enum CacheStoragePolicy: Int, Sendable, Hashable {
    case allowed = 0
    case allowedInMemoryOnly = 1
    case notAllowed = 2
}

/// One stored response: its URL, what the rules need (status, fields, times, Vary values), how
/// it may be stored, the application's user info, and its body's size.
public struct CachedEntry: Sendable, Hashable {
    public var url: URL
    public var response: StoredResponse
    public var storagePolicy: CacheStoragePolicy
    /// The application's user info as a JSON object (what survives a disk store).
    public var userInfo: [String: String]
    public var bodySize: Int
    public var created: Date

    public init(
        url: URL,
        response: StoredResponse,
        storagePolicy: CacheStoragePolicy = .allowed,
        userInfo: [String: String] = [:],
        bodySize: Int = 0,
        created: Date = Date()
    ) {
        self.url = url
        self.response = response
        self.storagePolicy = storagePolicy
        self.userInfo = userInfo
        self.bodySize = bodySize
        self.created = created
    }

    /// What a URL's entries are found by: the URL without its fragment (a GET's target).
    public static func key(for url: URL) -> String {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        components?.fragment = nil
        return components?.string ?? url.absoluteString
    }

    /// What one variant of a URL is stored under: the URL's key, then (when the response
    /// varies) a line feed, which no URL contains, and the request's values of the fields its
    /// Vary names as JSON with sorted keys: equal values, equal keys. Without Vary, the URL's
    /// key alone, as before variants were kept.
    public static func key(for url: URL, varyValues: [String: String?]) -> String {
        let base = key(for: url)
        return varyValues.isEmpty ? base : base + "\n" + varyJSON(varyValues)
    }

    /// This entry's key: its variant key, or, for a piece (``isPiece``), the variant's
    /// ``pieceKey(for:varyValues:)``.
    public var key: String {
        isPiece
            ? Self.pieceKey(for: url, varyValues: response.varyValues)
            : Self.key(for: url, varyValues: response.varyValues)
    }

    /// Whether this entry holds a piece of its representation (a 206, RFC 9111 §3.3) rather
    /// than a complete response: pieces never answer a request as a complete response does.
    public var isPiece: Bool { response.statusCode == 206 }

    /// What a variant's piece (one at most) is stored under: the variant key, a line feed and
    /// `partial`. It cannot be another entry's key: no URL has a line feed, and a variant key's
    /// one is followed by a JSON object (`{`), whose own line feeds are escaped. So the piece
    /// and the complete response of a variant are two rows, replaced and removed apart.
    public static func pieceKey(for url: URL, varyValues: [String: String?]) -> String {
        key(for: url, varyValues: varyValues) + "\npartial"
    }

    /// The canonical form of Vary values (the index's `vary` column, and part of a key): an
    /// object of the field names, sorted, and the request's values, null for an absent field.
    static func varyJSON(_ vary: [String: String?]) -> String {
        columnJSON(sortedObject(vary.mapValues(JSONValue.string(orNull:))))
    }

    /// An object of `members` sorted by key, so that the same values always have the same text
    /// (a variant's key holds it). For the lowercase field names Vary lists, this is the order
    /// indexes written with Foundation's JSONSerialization have too.
    static func sortedObject(_ members: [String: JSONValue]) -> JSONValue {
        .object(members.sorted { $0.key < $1.key })
    }

    /// JSON as the index keeps it: compact, with `/` escaped as `\/` as Foundation's
    /// JSONSerialization wrote it into existing indexes. A variant's key holds its `vary` text
    /// (Accept and User-Agent values have slashes) and a refresh finds its row by the `headers`
    /// text, so the same content must keep the same bytes.
    static func columnJSON(_ value: JSONValue) -> String {
        var bytes: [UInt8] = []
        // JSON has `/` only inside strings, and UTF-8 has its byte only as `/` itself.
        for byte in value.encoded() {
            if byte == UInt8(ascii: "/") { bytes.append(UInt8(ascii: "\\")) }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A hit's body: in memory, or the disk store's file, already open (an eviction meanwhile
/// removes the name, not what is read), to be read as it is needed.
public enum CachedBody: Sendable {
    case data(Data)
    case file(FileHandle, size: Int)

    /// The whole body (a file is read now, and closed).
    public func load() throws -> Data {
        switch self {
        case .data(let data): return data
        case .file(let handle, _):
            defer { try? handle.close() }
            return try handle.readToEnd() ?? Data()
        }
    }

    public var size: Int {
        switch self {
        case .data(let data): return data.count
        case .file(_, let size): return size
        }
    }
    /// Lets go of a body nobody reads (a file is closed).
    public func close() {
        if case .file(let handle, _) = self { try? handle.close() }
    }
}
