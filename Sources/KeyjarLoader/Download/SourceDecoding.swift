import CZlib
import Foundation
import Glibc
import KeyjarPlatform

/// The encodings a download decodes when its delegate says yes
/// (`download(_:shouldDecodeSourceDataOfMIMEType:)`): NSURLDownload's three, MacBinary, BinHex
/// and gzip. gzip is decoded with zlib, the maintained library (compress-nio would add SwiftNIO's
/// buffers to a module that has no other use for them); MacBinary and BinHex are small formats
/// decoded here (``MacBinaryDecoder``, ``BinHexDecoder``), to their data fork.
///
/// Decoding runs once the whole file has arrived, from the partial file into a file beside it:
/// so a download that is decoded can be continued like any other (the partial file holds the
/// bytes as the server sent them).
enum SourceDecoding: CaseIterable, Sendable {
    case macBinary
    case binHex
    case gzip

    /// The names the delegate is asked with, in this order: Apple's documentation names each
    /// format differently in different places (the NSURLDownloadDelegate reference:
    /// `application/macbinary`, `application/mac-binhex40`, `application/gzip`; the URL Loading
    /// System guide's listing: `application/binhex`, `application/x-gzip`), and the Linux MIME
    /// database (shared-mime-info) uses `application/x-macbinary`; a delegate written for any of
    /// them must hear its own. The one list of them.
    var askedTypes: [String] {
        switch self {
        case .macBinary: ["application/macbinary", "application/x-macbinary"]
        case .binHex: ["application/mac-binhex40", "application/binhex"]
        case .gzip: ["application/gzip", "application/x-gzip"]
        }
    }

    /// Other names servers send for the format: the delegate is asked with it first, then
    /// with ``askedTypes``.
    var otherTypes: [String] {
        switch self {
        case .macBinary: []
        case .binHex: ["application/x-binhex40"]
        case .gzip: ["application/x-gunzip"]
        }
    }

    /// The encoding of a response of this MIME type (lower case), if it is one.
    init?(mimeType: String) {
        guard
            let found = Self.allCases.first(where: {
                $0.askedTypes.contains(mimeType) || $0.otherTypes.contains(mimeType)
            })
        else { return nil }
        self = found
    }

    /// The names to ask the delegate about a response of `mimeType`, one after another until it
    /// says yes: the response's own, then the format's other documented names. Empty for a type
    /// that is no encoding a download decodes (StuffIt, for one, is not).
    static func questions(forMIMEType mimeType: String) -> [String] {
        guard let format = SourceDecoding(mimeType: mimeType) else { return [] }
        return [mimeType] + format.askedTypes.filter { $0 != mimeType }
    }

    /// The name of the decoded file: `report.txt.gz` → `report.txt`, `site.tgz` → `site.tar`,
    /// `notes.hqx` → `notes`, `app.bin` → `app`. The name inside a MacBinary or BinHex header is
    /// not used: it is known only once the body arrived, after the destination was decided, and
    /// it is a Mac OS Roman name that may hold `/`.
    func decodedName(_ name: String) -> String {
        let lowered = name.lowercased()
        if self == .gzip, lowered.hasSuffix(".tgz"), name.count > 4 { return String(name.dropLast(4)) + ".tar" }
        for suffix in extensions where lowered.hasSuffix(suffix) && name.count > suffix.count {
            return String(name.dropLast(suffix.count))
        }
        return name
    }

    private var extensions: [String] {
        switch self {
        case .macBinary: [".bin", ".macbin"]
        case .binHex: [".hqx"]
        case .gzip: [".gz", ".gzip"]
        }
    }

    /// Decodes the whole of `input` into `output` (file descriptors), in pieces: a file of any
    /// size takes a few buffers of memory. A file that is not what its type says, or is damaged,
    /// throws `.cannotDecodeContentData` saying what is wrong.
    func decode(from input: Int32, to output: Int32) throws(DownloadFileError) {
        switch self {
        case .gzip: try Self.decodeGzip(from: input, to: output)
        case .macBinary:
            var decoder = MacBinaryDecoder()
            try Self.decode(with: &decoder, from: input, to: output)
        case .binHex:
            var decoder = BinHexDecoder()
            try Self.decode(with: &decoder, from: input, to: output)
        }
    }

    private static func decode(
        with decoder: inout some MacFileStreamDecoder,
        from input: Int32,
        to output: Int32
    ) throws(DownloadFileError) {
        // Small pieces: BinHex's runs can make one piece some 95 times larger decoded.
        let chunk = 64 * 1024
        let source = UnsafeMutableRawBufferPointer.allocate(byteCount: chunk, alignment: 1)
        defer { source.deallocate() }
        var decoded: [UInt8] = []
        while true {
            let count = read(input, source.baseAddress, chunk)
            if count < 0 {
                if errno == EINTR { continue }
                throw .system("cannot read the downloaded data", errno)
            }
            if count == 0 { break }
            decoded.removeAll(keepingCapacity: true)
            do throws(MacFileDecodingError) {
                try decoder.decode(UnsafeRawBufferPointer(rebasing: source[0..<count]), into: &decoded)
            } catch {
                throw DownloadFileError(message: "\(error)", code: .cannotDecodeContentData)
            }
            let failure: DownloadFileError? = decoded.withUnsafeBytes { buffer in
                guard let base = buffer.baseAddress else { return nil }
                do throws(DownloadFileError) {
                    try write(base, count: buffer.count, to: output)
                    return nil
                } catch {
                    return error
                }
            }
            if let failure { throw failure }
        }
        do throws(MacFileDecodingError) {
            _ = try decoder.finish()
        } catch {
            throw DownloadFileError(message: "\(error)", code: .cannotDecodeContentData)
        }
    }

    /// gzip with zlib, in pieces: a file of any size takes two buffers of memory. Concatenated
    /// gzip members are decoded one after another.
    private static func decodeGzip(from input: Int32, to output: Int32) throws(DownloadFileError) {
        var stream = z_stream()
        // 15 window bits + 16: gzip only (a zlib or raw stream is not a .gz file).
        guard inflateInit2_(&stream, 15 + 16, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw DownloadFileError(message: "zlib could not start decoding", code: .cannotDecodeRawData)
        }
        defer { inflateEnd(&stream) }
        let chunk = 256 * 1024
        let source = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
        let target = UnsafeMutablePointer<UInt8>.allocate(capacity: chunk)
        defer {
            source.deallocate()
            target.deallocate()
        }
        var finishedMember = false
        var sawInput = false
        while true {
            let count = read(input, source, chunk)
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw .system("cannot read the downloaded data", errno) }
            if count == 0 { break }
            sawInput = true
            stream.next_in = source
            stream.avail_in = UInt32(count)
            repeat {
                if finishedMember, stream.avail_in > 0 {
                    // Another gzip member follows the last one's end.
                    guard inflateReset(&stream) == Z_OK else { throw Self.corrupt(stream) }
                    finishedMember = false
                }
                stream.next_out = target
                stream.avail_out = UInt32(chunk)
                let status = inflate(&stream, Z_NO_FLUSH)
                if status == Z_STREAM_END {
                    finishedMember = true
                } else if status != Z_OK && status != Z_BUF_ERROR {
                    throw Self.corrupt(stream)
                }
                try Self.write(target, count: chunk - Int(stream.avail_out), to: output)
                // A full output buffer may hide more of this member; input left after a member's
                // end is another member. (A member that ends exactly as the buffer fills is done:
                // zlib reports its end only once all of its output is out.)
            } while (!finishedMember && stream.avail_out == 0) || (finishedMember && stream.avail_in > 0)
        }
        guard sawInput, finishedMember else {
            throw DownloadFileError(
                message: "the gzip data ends before its end (the file is truncated)",
                code: .cannotDecodeContentData
            )
        }
    }

    private static func corrupt(_ stream: z_stream) -> DownloadFileError {
        let reason = stream.msg.map { String(cString: $0) } ?? "not gzip data"
        return DownloadFileError(
            message: "the file cannot be decoded as gzip: \(reason)",
            code: .cannotDecodeContentData
        )
    }

    private static func write(
        _ bytes: UnsafeRawPointer,
        count: Int,
        to output: Int32
    ) throws(DownloadFileError) {
        if let failure = FileDescriptor.writeAll(UnsafeRawBufferPointer(start: bytes, count: count), to: output) {
            throw .system("cannot write the decoded file", failure)
        }
    }
}
