import CZlib
import Foundation
import Glibc

/// Decoding of downloaded files whose type is an encoding of another file (the seed's
/// `shouldDecodeSourceDataOfMIMEType`). gzip is decoded with zlib, the maintained library
/// (compress-nio would add SwiftNIO's buffers to a module that has no other use for them);
/// the seed's MacBinary and BinHex are classic Mac OS formats Keyjar does not decode, and a
/// download asked to decode one fails saying so rather than saving something else.
enum SourceDecoding {
    case gzip

    static let gzipTypes: Set<String> = ["application/gzip", "application/x-gzip", "application/x-gunzip"]
    static let refusedTypes: [String: String] = [
        "application/macbinary": "MacBinary",
        "application/x-macbinary": "MacBinary",
        "application/mac-binhex40": "BinHex",
        "application/x-binhex40": "BinHex",
        "application/x-stuffit": "StuffIt",
    ]

    /// Whether a delegate is asked about this MIME type at all.
    static func isEncodedFileType(_ mimeType: String) -> Bool {
        gzipTypes.contains(mimeType) || refusedTypes[mimeType] != nil
    }

    /// The decoding for a type the delegate asked to decode; a type Keyjar cannot decode
    /// throws the reason.
    static func decoding(forMIMEType mimeType: String) throws(DownloadFileError) -> SourceDecoding? {
        if gzipTypes.contains(mimeType) { return .gzip }
        if let format = refusedTypes[mimeType] {
            throw DownloadFileError(
                message: "Keyjar does not decode \(format) files (\(mimeType)); download it without decoding",
                code: .cannotDecodeContentData
            )
        }
        return nil
    }

    /// The name of the decoded file: `report.txt.gz` → `report.txt`, `site.tgz` → `site.tar`.
    func decodedName(_ name: String) -> String {
        let lowered = name.lowercased()
        if lowered.hasSuffix(".tgz"), name.count > 4 { return String(name.dropLast(4)) + ".tar" }
        for suffix in [".gz", ".gzip"] where lowered.hasSuffix(suffix) && name.count > suffix.count {
            return String(name.dropLast(suffix.count))
        }
        return name
    }

    /// Decodes the whole of `input` into `output` (file descriptors), in pieces: a file of any
    /// size takes two buffers of memory. Concatenated gzip members are decoded one after another.
    func decode(from input: Int32, to output: Int32) throws(DownloadFileError) {
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
        _ bytes: UnsafeMutablePointer<UInt8>,
        count: Int,
        to output: Int32
    ) throws(DownloadFileError) {
        var offset = 0
        while offset < count {
            let written = Glibc.write(output, bytes + offset, count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                throw .system("cannot write the decoded file", errno)
            }
            offset += written
        }
    }
}
