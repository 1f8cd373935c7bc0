import Foundation
import FoundationNetworking
import KeyjarHTTPCache
import KeyjarLocks
import KeyjarResponseCache

// Cache hits: a stored response delivered as a load would deliver it (through the delegate
// contract), and the head it is delivered with.
extension LoaderConnection {
    /// A hit: the stored response (its Age current), its body in pieces, the end, as a load
    /// would deliver them. Its Set-Cookie lines are not stored again; the fields a qualified
    /// no-cache names are left out (reused without validation).
    func serveFromCache(_ entry: CachedEntry, body: CachedBody, age: TimeInterval, url: URL) {
        var reused = entry
        reused.response.headers = HTTPCacheRules.fieldsToReuse(entry.response.headers)
        guard deliverCached(reused, age: age, url: url) != nil else {
            closeBody(body)
            return
        }
        switch body {
        case .data(let data):
            if !data.isEmpty { channel.deliver { $0.connection(self, didReceive: data) } }
        case .file(let handle, _):
            defer { try? handle.close() }
            while let chunk = try? handle.read(upToCount: Self.cacheReadChunk), !chunk.isEmpty {
                channel.deliver { $0.connection(self, didReceive: chunk) }
            }
        }
        finish()
    }

    static let cacheReadChunk = 256 << 10

    /// A stored entry's head, with the status's standard reason phrase (the cache keeps none).
    static func head(of entry: CachedEntry, age: TimeInterval? = nil) -> ResponseHead {
        var fields = entry.response.headers
        if let age { fields.replace("Age", with: [String(Int(age.rounded(.down)))]) }
        return ResponseHead(
            statusCode: entry.response.statusCode,
            httpVersion: "HTTP/1.1",
            reasonPhrase: ResponseHead.standardReasonPhrase(for: entry.response.statusCode),
            fields: fields.fields.map { (name: $0.name, value: $0.value) }
        )
    }

    /// Delivers a stored response (its Age current) as the load's response; nil, the load
    /// failed, when it cannot be read.
    func deliverCached(_ entry: CachedEntry, age: TimeInterval, url: URL) -> HTTPURLResponse? {
        let head = Self.head(of: entry, age: age)
        published.withLock { $0.head = head }
        guard let response = head.httpResponse(for: url) else {
            fail(LoaderError.make(.cannotParseResponse, "The cached response cannot be read", url: url))
            return nil
        }
        channel.deliver { $0.connection(self, didReceive: response) }
        return response
    }
}
