import FoundationEssentials
import Glibc
import KeyjarPlatform

/// A streamed request body copied, as it is first sent, to a private file that has no name
/// (made 0600 in the temporary directory and unlinked at once), so that a load that must send
/// it again (a 307 or 308 redirect, an authentication retry) can. Made only for a delegate
/// without `needNewBodyStream` (the loader's `LoaderConnectionBodyStreamDelegate`): one with
/// it supplies the stream itself. The file goes when the load does.
///
/// The source stream is read on libcurl's engine thread during the first attempt and, for a
/// retry, by `replay()` on the connection's work once that attempt ended: never at once.
package final class BodySpool: @unchecked Sendable {
    private let source: any BodyStream
    private let descriptor: Int32
    private var written: Int64 = 0
    private var sourceEnded = false
    private var failed = false

    /// Nil when no file could be made in `directory`.
    package init?(source: any BodyStream, directory: String = BodySpool.temporaryDirectory) {
        // mkstemp's way, with close-on-exec from the start (a process started meanwhile must not
        // inherit it; Glibc's module does not bring mkostemp).
        var made: Int32 = -1
        for _ in 0..<8 where made < 0 {
            let path = "\(directory)/keyjar-body-\(UUID().uuidString)"
            made = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if made >= 0 { unlink(path) }
        }
        guard made >= 0 else { return nil }
        self.source = source
        descriptor = made
    }

    deinit { close(descriptor) }

    /// Where the copy is made: `TMPDIR` when set, as `NSTemporaryDirectory()` reads it, else
    /// /tmp.
    package static var temporaryDirectory: String {
        guard let value = getenv("TMPDIR").map({ String(cString: $0) }), !value.isEmpty else { return "/tmp" }
        return value
    }

    /// Reads the next bytes of the source into `buffer` and keeps a copy (engine thread).
    /// Returns the count, 0 at the end, -1 when the source failed.
    package func readThrough(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int {
        let count = source.read(into: buffer, capacity: capacity)
        if count == 0 { sourceEnded = true }
        // A source that failed once may read on or report its end: the copy would lack bytes.
        if count < 0 { failed = true }
        guard count > 0 else { return count }
        if !failed, !Self.writeAll(descriptor, buffer, count) { failed = true }
        written += Int64(count)
        return count
    }

    /// A reader of the whole body for another attempt: what the first attempt did not send is
    /// read from the source first. Nil when the copy could not be kept (a full disk) or the
    /// source failed.
    package func replay() -> SpooledBody? {
        guard !failed else { return nil }
        if !sourceEnded {
            let chunk = 64 * 1024
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
            defer { buffer.deallocate() }
            while true {
                let count = source.read(into: buffer, capacity: chunk)
                if count < 0 { return nil }
                if count == 0 { break }
                guard Self.writeAll(descriptor, buffer, count) else { return nil }
                written += Int64(count)
            }
            sourceEnded = true
        }
        return SpooledBody(spool: self, length: written)
    }

    /// Bytes of the copy at `offset` (any thread: pread has no shared position).
    package func read(at offset: Int64, into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int {
        pread(descriptor, buffer, capacity, off_t(offset))
    }

    private static func writeAll(_ descriptor: Int32, _ bytes: UnsafeMutablePointer<UInt8>, _ count: Int) -> Bool {
        FileDescriptor.writeAll(UnsafeRawBufferPointer(start: bytes, count: count), to: descriptor) == nil
    }
}

/// A request body read as it is sent (the loader's `InputStream`, without Foundation).
package protocol BodyStream: AnyObject {
    /// Reads the next bytes into `buffer`, opening the stream on the first call: the count, 0
    /// at the end, -1 when the stream failed.
    func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int
}

/// One more sending of a spooled body, from its first byte.
package final class SpooledBody: @unchecked Sendable {
    package let spool: BodySpool
    package let length: Int64
    private var offset: Int64 = 0

    package init(spool: BodySpool, length: Int64) {
        self.spool = spool
        self.length = length
    }

    package func read(into buffer: UnsafeMutablePointer<UInt8>, capacity: Int) -> Int {
        let count = spool.read(at: offset, into: buffer, capacity: min(capacity, Int(length - offset)))
        if count > 0 { offset += Int64(count) }
        return count
    }
}
