import CBrotli
import CZlib
import CZstd
import FoundationEssentials
import KeyjarCore

/// A coding the loader undoes itself, in a response's Content-Encoding or Transfer-Encoding.
///
/// libcurl's own decoding is off: it fails the whole load ("Unrecognized content encoding
/// type") on a coding it does not know, where RFC 9110 §8.4 lets a recipient keep a
/// representation it cannot decode. So the loader advertises exactly what it decodes, decodes
/// that as the body arrives, and delivers anything else as it came.
package enum ContentCoding: Sendable, Equatable {
    case gzip
    case deflate
    case brotli
    case zstd

    /// The request's Accept-Encoding when it names none: the codings decoded here.
    static let acceptEncodingLine = "Accept-Encoding: gzip, deflate, br, zstd"

    package init?(token: String) {
        switch token.lowercased() {
        // x-gzip: RFC 9110 §8.4.1.3 asks recipients to take it as gzip.
        case "gzip", "x-gzip": self = .gzip
        case "deflate": self = .deflate
        case "br": self = .brotli
        case "zstd": self = .zstd
        default: return nil
        }
    }

    /// The codings to undo for a response's body, the last applied first; nil when its body is
    /// delivered as it came: no coding, or one this loader does not know (RFC 9110 §8.4: the
    /// content then keeps its coding, and its Content-Encoding says which).
    ///
    /// Transfer codings (libcurl removes `chunked`) were applied after the content codings and
    /// are undone first; one not known leaves everything as it came. A content coding not known
    /// leaves the content codings as they came (Content-Encoding still names them all), the
    /// transfer codings undone: they are hop-by-hop, and a cache keeps no Transfer-Encoding.
    /// A 206's content codings are left as they came.
    package static func decodingPlan(for head: ResponseHead) -> [ContentCoding]? {
        // Most responses name no coding: one pass over the names, no allocation.
        guard
            head.fields.contains(where: {
                ResponseHead.sameFieldName($0.name, "Content-Encoding")
                    || ResponseHead.sameFieldName($0.name, "Transfer-Encoding")
            })
        else { return nil }
        // The known codings of a field, in order; nil when it names one not known.
        func codings(_ name: String, ignoring ignored: Set<String>) -> [ContentCoding]? {
            let tokens = head.values(of: name).flatMap { $0.split(separator: ",") }
                .map { $0.trimmingWhitespace().lowercased() }
                .filter { !$0.isEmpty && !ignored.contains($0) }
            let known = tokens.compactMap(ContentCoding.init(token:))
            return known.count == tokens.count ? known : nil
        }
        guard let transfer = codings("Transfer-Encoding", ignoring: ["chunked", "identity"]) else { return nil }
        // A 206's content is a slice of the coded representation (RFC 9110 §14.1: ranges count
        // its bytes): it cannot be decoded alone, and Content-Range describes it as it came.
        let content = head.statusCode == 206 ? [] : codings("Content-Encoding", ignoring: ["identity"]) ?? []
        let plan = transfer.reversed() + content.reversed()
        return plan.isEmpty ? nil : Array(plan)
    }
}

/// Why a body could not be decoded.
package struct ContentDecodingError: Error, CustomStringConvertible {
    package var description: String
}

/// Undoes a response's codings as its body arrives (on the engine thread): each piece in, its
/// decoded bytes out in pieces of at most 64 KiB, never the whole body in memory.
package final class ContentDecoder {
    /// More codings than this on one response fail it, as curl fails them (CVE-2023-23916):
    /// each is a decoder's state and buffer, and a head of 256 KiB could name tens of thousands.
    package static let maximumCodings = 5

    private let stages: [any DecodingStage]

    package init(_ plan: [ContentCoding]) throws(ContentDecodingError) {
        guard plan.count <= Self.maximumCodings else {
            throw ContentDecodingError(
                description:
                    "the response names \(plan.count) codings to undo; at most \(Self.maximumCodings) are undone"
            )
        }
        var stages: [any DecodingStage] = []
        for coding in plan {
            switch coding {
            case .gzip: stages.append(try ZlibStage(format: .gzip))
            case .deflate: stages.append(try ZlibStage(format: .deflate))
            case .brotli: stages.append(try BrotliStage())
            case .zstd: stages.append(try ZstdStage())
            }
        }
        self.stages = stages
    }

    /// Decodes the next piece of the body, handing each decoded piece to `emit` (often none:
    /// the decoders buffer). `emit`'s buffer is valid during the call only.
    package func decode(
        _ input: UnsafeRawBufferPointer,
        emit: (UnsafeRawBufferPointer) -> Void
    ) throws(ContentDecodingError) {
        try decode(input, from: 0, emit: emit)
    }

    private func decode(
        _ input: UnsafeRawBufferPointer,
        from index: Int,
        emit: (UnsafeRawBufferPointer) -> Void
    ) throws(ContentDecodingError) {
        guard index < stages.count else { return emit(input) }
        try stages[index].decode(input) { (piece) throws(ContentDecodingError) in
            try decode(piece, from: index + 1, emit: emit)
        }
    }
}

/// One coding's decoder: hands what `input` decodes to, piece by piece, to `emit`.
private protocol DecodingStage: AnyObject {
    func decode(
        _ input: UnsafeRawBufferPointer,
        emit: (UnsafeRawBufferPointer) throws(ContentDecodingError) -> Void
    ) throws(ContentDecodingError)
}

/// Scratch space a stage decodes into, one emitted piece at most.
private let stageBufferSize = 64 << 10

/// gzip and deflate with zlib. "deflate" is the zlib format (RFC 9110 §8.4.1.2), but servers
/// that send raw deflate are common enough that libcurl and the browsers take both: so here.
private final class ZlibStage: DecodingStage {
    package enum Format {
        case gzip
        case deflate
    }

    private let format: Format
    /// zlib keeps a pointer back to the stream: it must not move.
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: stageBufferSize)
    private var sawInput = false
    private var ended = false
    /// Raw deflate is tried once, after the zlib format failed at the start: data that is
    /// neither fails (trying again would loop for ever; the fuzzer found a 24-byte body).
    private var triedRaw = false

    package init(format: Format) throws(ContentDecodingError) {
        self.format = format
        stream.initialize(to: z_stream())
        // gzip: 15 window bits + 32 takes a gzip or a zlib header, as libcurl does.
        let bits: Int32 = format == .gzip ? 15 + 32 : 15
        guard inflateInit2_(stream, bits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deallocate()
            buffer.deallocate()
            throw ContentDecodingError(description: "zlib could not start decoding")
        }
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
        buffer.deallocate()
    }

    package func decode(
        _ input: UnsafeRawBufferPointer,
        emit: (UnsafeRawBufferPointer) throws(ContentDecodingError) -> Void
    ) throws(ContentDecodingError) {
        // Bytes after the end of the coded data are ignored, as libcurl ignores them.
        guard !ended, let base = input.baseAddress, !input.isEmpty else { return }
        let first = !sawInput
        sawInput = true
        stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
        stream.pointee.avail_in = UInt32(input.count)
        while true {
            stream.pointee.next_out = buffer
            stream.pointee.avail_out = UInt32(stageBufferSize)
            let status = inflate(stream, Z_NO_FLUSH)
            if status == Z_DATA_ERROR, first, format == .deflate, !triedRaw, stream.pointee.total_out == 0 {
                // Not the zlib format: raw deflate, from the start of the body.
                triedRaw = true
                guard inflateReset2(stream, -15) == Z_OK else { throw corrupt() }
                stream.pointee.next_in = UnsafeMutablePointer(mutating: base.assumingMemoryBound(to: UInt8.self))
                stream.pointee.avail_in = UInt32(input.count)
                continue
            }
            guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else { throw corrupt() }
            let produced = stageBufferSize - Int(stream.pointee.avail_out)
            if produced > 0 { try emit(UnsafeRawBufferPointer(start: buffer, count: produced)) }
            if status == Z_STREAM_END {
                ended = true
                return
            }
            // Done when zlib took all the input and had room left (nothing more held back).
            if stream.pointee.avail_in == 0, stream.pointee.avail_out > 0 { return }
            if status == Z_BUF_ERROR, produced == 0 { return }
        }
    }

    private func corrupt() -> ContentDecodingError {
        let reason = stream.pointee.msg.map { String(cString: $0) } ?? "corrupt data"
        return ContentDecodingError(description: "the \(format) body cannot be decoded: \(reason)")
    }
}

/// br with libbrotlidec.
private final class BrotliStage: DecodingStage {
    private let state: OpaquePointer
    private let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: stageBufferSize)

    package init() throws(ContentDecodingError) {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else {
            buffer.deallocate()
            throw ContentDecodingError(description: "brotli could not start decoding")
        }
        self.state = state
    }

    deinit {
        BrotliDecoderDestroyInstance(state)
        buffer.deallocate()
    }

    package func decode(
        _ input: UnsafeRawBufferPointer,
        emit: (UnsafeRawBufferPointer) throws(ContentDecodingError) -> Void
    ) throws(ContentDecodingError) {
        var available = input.count
        var next = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        while true {
            var room = stageBufferSize
            var out: UnsafeMutablePointer<UInt8>? = buffer
            let result = BrotliDecoderDecompressStream(state, &available, &next, &room, &out, nil)
            if stageBufferSize > room {
                try emit(UnsafeRawBufferPointer(start: buffer, count: stageBufferSize - room))
            }
            switch result {
            case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: continue
            case BROTLI_DECODER_RESULT_ERROR:
                let code = BrotliDecoderGetErrorCode(state)
                throw ContentDecodingError(
                    description: "the br body cannot be decoded: \(String(cString: BrotliDecoderErrorString(code)))"
                )
            // Needs more input, or done (bytes after the end are ignored).
            default: return
            }
        }
    }
}

/// zstd with libzstd.
private final class ZstdStage: DecodingStage {
    private let stream: OpaquePointer
    private let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: stageBufferSize)

    package init() throws(ContentDecodingError) {
        guard let stream = ZSTD_createDStream(), ZSTD_isError(ZSTD_initDStream(stream)) == 0 else {
            buffer.deallocate()
            throw ContentDecodingError(description: "zstd could not start decoding")
        }
        // RFC 9659 §3: a window of at most 8 MB (2^23) for the zstd content coding. zstd's own
        // limit is 128 MB, which a server could make every transfer allocate.
        _ = ZSTD_DCtx_setParameter(stream, ZSTD_d_windowLogMax, 23)
        self.stream = stream
    }

    deinit {
        ZSTD_freeDStream(stream)
        buffer.deallocate()
    }

    package func decode(
        _ input: UnsafeRawBufferPointer,
        emit: (UnsafeRawBufferPointer) throws(ContentDecodingError) -> Void
    ) throws(ContentDecodingError) {
        var source = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        while true {
            var target = ZSTD_outBuffer(dst: buffer, size: stageBufferSize, pos: 0)
            let result = ZSTD_decompressStream(stream, &target, &source)
            if ZSTD_isError(result) != 0 {
                throw ContentDecodingError(
                    description: "the zstd body cannot be decoded: \(String(cString: ZSTD_getErrorName(result)))"
                )
            }
            if target.pos > 0 { try emit(UnsafeRawBufferPointer(start: buffer, count: target.pos)) }
            // A full buffer may leave decoded bytes inside zstd even when the input is used up.
            if source.pos == source.size, target.pos < target.size { return }
        }
    }
}
