public import Foundation
import FoundationNetworking
import KeyjarPlatform
import KeyjarTransfer

/// A `data:` URL (RFC 2397): `data:[<media type>][;base64],<data>`.
public struct DataURL: Sendable, Hashable {
    /// The media type without parameters, lower-cased (`text/plain` when none is given).
    public var mimeType: String
    /// The `charset` parameter (`US-ASCII` when no media type is given).
    public var textEncodingName: String?
    public var data: Data

    /// Parses `text` (the whole URL). A media type that is not `type/subtype` is read as
    /// `text/plain;charset=US-ASCII`, as browsers do; a URL without its comma, or with base64
    /// that does not decode, is an error.
    public init(_ text: String) throws(DataURLError) {
        var rest = Substring(text)
        guard rest.count >= 5, rest.prefix(5).lowercased() == "data:" else {
            throw DataURLError(reason: "it does not begin with data:")
        }
        rest = rest.dropFirst(5)
        guard let comma = rest.firstIndex(of: ",") else {
            throw DataURLError(reason: "it has no comma before its data")
        }
        var parameters = rest[..<comma].split(separator: ";", omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let isBase64 = parameters.count > 1 && parameters.last?.lowercased() == "base64"
        if isBase64 { parameters.removeLast() }
        let type = parameters.first?.lowercased() ?? ""
        let charset = parameters.dropFirst().lazy
            .compactMap { parameter -> String? in
                guard let equals = parameter.firstIndex(of: "="),
                    parameter[..<equals].trimmingCharacters(in: .whitespaces).lowercased() == "charset"
                else { return nil }
                let value = parameter[parameter.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                return value.hasPrefix("\"") && value.hasSuffix("\"") && value.count >= 2
                    ? String(value.dropFirst().dropLast()) : value
            }
            .first
        if Self.isMediaType(type) {
            mimeType = type
            textEncodingName = charset.flatMap { $0.isEmpty ? nil : $0 }
        } else {
            mimeType = "text/plain"
            textEncodingName = type.isEmpty ? (charset ?? "US-ASCII") : "US-ASCII"
        }
        let payload = Self.percentDecoded(rest[rest.index(after: comma)...].utf8)
        if isBase64 {
            // Whitespace is allowed between base64 characters; missing padding is tolerated.
            var characters = payload.filter { !($0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || $0 == 0x0C) }
            while characters.count % 4 != 0 { characters.append(UInt8(ascii: "=")) }
            guard let decoded = Data(base64Encoded: Data(characters)) else {
                throw DataURLError(reason: "its data is not valid base64")
            }
            data = decoded
        } else {
            data = Data(payload)
        }
    }

    static func isMediaType(_ text: String) -> Bool {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.utf8.allSatisfy(isTokenByte) }
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// `%XX` decoded to its byte; a `%` not followed by two hex digits stays as it is.
    private static func percentDecoded(_ bytes: Substring.UTF8View) -> [UInt8] {
        PercentEncoding.decoded(bytes, strict: false) ?? []
    }
}

/// A `data:` URL that cannot be read, and why.
public struct DataURLError: Error, CustomStringConvertible, Sendable, Hashable {
    public var reason: String
    public var description: String { "The data: URL cannot be read: \(reason)." }
}

/// The loader's own protocol for `data:` URLs, through the same mechanism as an application's.
final class DataURLProtocol: LoaderProtocol, @unchecked Sendable {
    override class func canInit(with request: URLRequest) -> Bool {
        guard let scheme = request.url?.scheme else { return false }
        return ResponseHead.sameFieldName(scheme, "data")
    }

    override func startLoading() {
        guard let url = request.url else { return }
        do {
            // A fragment names a part of the resource; it is not data.
            let parsed = try DataURL(String(url.absoluteString.prefix { $0 != "#" }))
            let response = URLResponse(
                url: url,
                mimeType: parsed.mimeType,
                expectedContentLength: parsed.data.count,
                textEncodingName: parsed.textEncodingName
            )
            client.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            if !parsed.data.isEmpty { client.urlProtocol(self, didLoad: parsed.data) }
            client.urlProtocolDidFinishLoading(self)
        } catch {
            client.urlProtocol(self, didFailWithError: LoaderError.make(.badURL, error.description, url: url))
        }
    }
}
