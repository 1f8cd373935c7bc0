import Foundation
import FoundationNetworking
import KeyjarTransfer

/// A request's body stream across a load's attempts, and the one owner of its copy. A stream
/// can be read once, yet a 307 or 308 redirect and an authentication retry send the body
/// again: the first sending is copied as it goes (`BodySpool`), unless the delegate supplies
/// new streams itself (Apple's rule: implementing `needNewBodyStream` opts out of the copy).
/// Belongs to the connection's serial work.
struct StreamedRequestBody {
    /// Whether the stream was given to an attempt.
    private var sent = false
    /// The copy of the first sending, for the attempts after it.
    private var spool: BodySpool?

    /// Why the body cannot be sent again.
    enum Exhausted: Error, Equatable {
        /// The delegate supplies new streams and gave none.
        case delegateGaveNoStream
        /// The copy could not be kept (a full disk) or the stream failed.
        case noCopy

        var message: String {
            switch self {
            case .delegateGaveNoStream:
                "The request body stream must be sent again and the delegate gave no new stream (needNewBodyStream returned nil)"
            case .noCopy: "The request body stream cannot be sent again: its copy could not be kept"
            }
        }
    }

    /// The body of the next attempt: `stream` the first time (copied unless `newStream` is
    /// given); after that the delegate's new stream (`newStream`, which asks it) or the copy.
    mutating func sending(
        _ stream: InputStream,
        length: Int64?,
        newStream: (() -> InputStream?)?
    ) throws(Exhausted) -> TransferRequest.Body {
        guard sent else {
            sent = true
            guard newStream == nil else { return .stream(InputStreamBody(stream), length: length) }
            let body = InputStreamBody(stream)
            spool = BodySpool(source: body)
            return spool.map { .spooling($0, length: length) } ?? .stream(body, length: length)
        }
        if let newStream {
            guard let fresh = newStream() else { throw .delegateGaveNoStream }
            return .stream(InputStreamBody(fresh), length: length)
        }
        guard let again = spool?.replay() else { throw .noCopy }
        return .spooled(again)
    }

    /// Whether a copy of the first sending is kept (for tests and diagnostics).
    var keepsCopy: Bool { spool != nil }

    /// The copy goes with the load, not with the last reference to the connection.
    mutating func drop() { spool = nil }
}

/// A request's `InputStream` as libcurl's engine reads it.
final class InputStreamBody: BodyStream {
    let stream: InputStream

    init(_ stream: InputStream) { self.stream = stream }

    func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int {
        if stream.streamStatus == .notOpen { stream.open() }
        return stream.read(buffer, maxLength: capacity)
    }
}
