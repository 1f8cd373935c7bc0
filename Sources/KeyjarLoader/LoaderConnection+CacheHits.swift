import Foundation
import FoundationNetworking
import KeyjarHTTPCache
import KeyjarLocks
import KeyjarResponseCache
import KeyjarTransfer

// Cache hits: a stored response delivered as a load would deliver it (through the delegate
// contract) — whole, its fields alone, or a slice — and the head it is delivered with.
extension LoaderConnection {
    /// A stored response answering the load, as a load would deliver it: its head (Age
    /// current), its content in pieces, the end. Its Set-Cookie lines are not stored again.
    func serve(_ answer: CachedAnswer, url: URL) {
        guard deliverCached(answer.entry, age: answer.age, url: url) != nil else {
            answer.body.close()
            return
        }
        switch (answer.content, answer.body) {
        case (.none, _):
            answer.body.close()
        case (.whole, .data(let data)):
            if !data.isEmpty { channel.deliver { $0.connection(self, didReceive: data) } }
        case (.whole, .file(let handle, _)):
            defer { try? handle.close() }
            while let chunk = try? handle.read(upToCount: Self.cacheReadChunk), !chunk.isEmpty {
                channel.deliver { $0.connection(self, didReceive: chunk) }
            }
        case (.slice(let range), let body):
            guard deliverSlice(range, of: body, url: url) else { return }
        }
        finish()
    }

    /// The bytes `range` of a stored body, in pieces; false, the load failed, when the body
    /// cannot give them.
    func deliverSlice(_ range: ClosedRange<Int>, of body: CachedBody, url: URL) -> Bool {
        switch body {
        case .data(let data):
            let start = data.startIndex + range.lowerBound
            channel.deliver { $0.connection(self, didReceive: data[start..<(start + range.count)]) }
        case .file(let handle, _):
            defer { try? handle.close() }
            do {
                try handle.seek(toOffset: UInt64(range.lowerBound))
                var left = range.count
                while left > 0, let chunk = try handle.read(upToCount: min(left, Self.cacheReadChunk)),
                    !chunk.isEmpty
                {
                    left -= chunk.count
                    channel.deliver { $0.connection(self, didReceive: chunk) }
                }
                // The file is shorter than the index says: the 206 promised bytes it cannot give.
                guard left == 0 else { throw CocoaError(.fileReadCorruptFile) }
            } catch {
                fail(LoaderError.make(.cannotParseResponse, "The cached response's body cannot be read", url: url))
                return false
            }
        }
        return true
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
