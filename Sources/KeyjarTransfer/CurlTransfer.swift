package import CCurl
import Dispatch
package import FoundationEssentials
import Glibc
import KeyjarLocks
package import Synchronization

/// What one transfer reports, in order, from the engine thread.
package enum TransferEvent: Sendable {
    /// A final HTTP response head (interim 1xx heads are skipped).
    case head(ResponseHead)
    /// A file: or ftp: transfer started delivering; the length is -1 when unknown.
    case nonHTTPResponse(expectedLength: Int64)
    case data(Data)
    case sent(total: Int64, expected: Int64)
    case completed(CurlResult)
}

/// How a transfer ended, in libcurl's terms.
package struct CurlResult: Sendable {
    package var code: UInt32
    package var message: String
    /// The OS error behind a connection failure (CURLINFO_OS_ERRNO), or 0.
    package var osErrno: Int
    /// Set when Keyjar itself stopped the transfer (oversized or malformed head).
    package var headProblem: String?
    /// Set when the body's coding could not be undone (the code is then CURLE_BAD_CONTENT_ENCODING).
    var decodingProblem: String?

    package init(
        code: UInt32,
        message: String,
        osErrno: Int,
        headProblem: String? = nil,
        decodingProblem: String? = nil
    ) {
        self.code = code
        self.message = message
        self.osErrno = osErrno
        self.headProblem = headProblem
        self.decodingProblem = decodingProblem
    }

    package var succeeded: Bool { code == CURLE_OK.rawValue }
}

/// What a single attempt sends: one easy handle's worth. Redirects and authentication retries
/// are new attempts.
package struct TransferRequest: @unchecked Sendable {
    package enum Body {
        case none
        case data(Data)
        /// Read on the engine thread only; a stream is never shared between attempts.
        case stream(any BodyStream, length: Int64?)
        /// A stream read for the first time, copied as it goes for a retry.
        case spooling(BodySpool, length: Int64?)
        /// A body spooled by an earlier attempt, sent again.
        case spooled(SpooledBody)
    }

    package init(url: URL, method: String, headerLines: [String], timeout: TimeInterval) {
        self.url = url
        self.method = method
        self.headerLines = headerLines
        self.timeout = timeout
    }

    package var url: URL
    package var method: String
    /// Header lines in order, "Name: value".
    package var headerLines: [String]
    package var body: Body = .none
    package var timeout: TimeInterval

    /// `timeout` as a number of seconds every conversion can take: at least a millisecond, at
    /// most about 31 years (a request may ask for `.infinity`, which no integer holds).
    var idleTimeoutSeconds: Double { timeout.isNaN ? 60 : min(max(timeout, 0.001), 1e9) }
    /// libcurl-driven authentication (NTLM, Negotiate) for this attempt.
    package var curlAuthentication: (scheme: Int, user: String, password: String)?
    /// Proxy credentials for libcurl to answer the proxy with (CONNECT included).
    package var curlProxyAuthentication: (scheme: Int, user: String, password: String)?
    /// An explicit proxy; nil lets libcurl read the environment.
    package var proxy: URL?
    /// Key pins (`sha256//…`) of certificates accepted for this host although they failed
    /// verification: verification is off, and libcurl refuses any other key in the handshake.
    package var acceptedKeyPins: [String] = []
    /// The client certificate and key to offer when the server asks for one.
    package var clientCertificate: ClientCertificate?
    /// The certificate authorities verification trusts (the loader's configuration).
    package var trustAnchors = TrustAnchors.system
}

/// One libcurl easy handle and the state its callbacks need. Created anywhere; after
/// `CurlEngine.add` only the engine thread touches it, until `.completed` has been reported.
package final class CurlTransfer: @unchecked Sendable {
    /// A receiver with this much undelivered data pauses the transfer (streamed, not buffered).
    static let pauseThreshold = 4 << 20
    static let resumeThreshold = 1 << 20

    /// `KEYJAR_LOADER_TRACE`, read once: the environment is a linear scan per lookup.
    private static let traces = getenv("KEYJAR_LOADER_TRACE") != nil

    package let easy: UnsafeMutableRawPointer
    private let receive: @Sendable (TransferEvent) -> Void
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    private let isHTTP: Bool
    private var body: TransferRequest.Body
    private var bodyOffset = 0
    private var lastReportedUpload: Int64 = 0
    private var expectedUpload: Int64 = -1
    private var headParser = ResponseHeadParser()
    private var headProblem: String?
    /// Whether this transfer undoes the codings it advertised (the request named no
    /// Accept-Encoding of its own, whose codings would be the caller's to undo).
    private var decodesCodings = false
    /// The current response's decoder; nil delivers the body as it comes.
    private var decoder: ContentDecoder?
    private var decodingProblem: String?
    private var startedNonHTTP = false
    private var completed = false
    private let unread = Atomic<Int>(0)
    /// Foundation's timeoutInterval is an idle timeout; libcurl's low-speed check averages
    /// over seconds and misses a server that sends a little and then stalls, so the engine
    /// enforces it from the last moment a byte moved.
    let idleTimeout: UInt64
    private(set) var lastActivity: UInt64 = 0
    private let paused = Atomic<Bool>(false)
    /// How often the receiver's backlog paused this transfer.
    package let pauses = Atomic<Int>(0)

    /// Easy handles of finished transfers, reset to libcurl's defaults, so that an attempt does
    /// not make and free a handle (several KiB, with its own buffers) of its own. A pointer is
    /// owned by whoever took it out.
    private struct IdleHandles: @unchecked Sendable {
        var handles: [UnsafeMutableRawPointer] = []
    }
    private static let idleHandles = Locked(IdleHandles())
    /// Enough for bursts of sequential and moderately concurrent loads; beyond it handles are freed.
    private static let maximumIdleHandles = 32

    /// Nil when libcurl cannot make an easy handle (out of memory).
    package init?(_ request: TransferRequest, receive: @escaping @Sendable (TransferEvent) -> Void) {
        guard let easy = Self.idleHandles.withLock({ $0.handles.popLast() }) ?? curl_easy_init() else {
            return nil
        }
        self.easy = easy
        self.receive = receive
        self.body = request.body
        idleTimeout = UInt64(request.idleTimeoutSeconds * 1_000_000_000)
        let scheme = request.url.scheme?.lowercased() ?? ""
        isHTTP = scheme == "http" || scheme == "https"
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        configure(request)
    }

    deinit {
        // Options (the header list, the callbacks' context pointing at this object) are
        // cleared before the handle may be taken again; connections stay in the multi handle.
        curl_easy_reset(easy)
        let easy = easy
        let kept = Self.idleHandles.withLock { idle in
            guard idle.handles.count < Self.maximumIdleHandles else { return false }
            idle.handles.append(easy)
            return true
        }
        if !kept { curl_easy_cleanup(easy) }
        curl_slist_free_all(headerList)
        errorBuffer.deallocate()
    }

    private func configure(_ request: TransferRequest) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        set(CURLOPT_URL, request.url.absoluteString)
        set(CURLOPT_PROTOCOLS_STR, "http,https,ftp,ftps,file")
        set(CURLOPT_NOSIGNAL, 1)
        // A debugging aid: libcurl's trace on stderr, never on unless asked for, and with
        // credentials, cookies and bodies left out (CurlTrace).
        if Self.traces { keyjar_easy_trace(easy, CurlTrace.callback) }
        // Redirects and challenges go through the delegate, hop by hop.
        set(CURLOPT_FOLLOWLOCATION, 0)
        // Codings are undone here (ContentDecoder), not by libcurl, which would fail the load
        // on one it does not know; this also keeps it from undoing a transfer coding it knows.
        set(CURLOPT_HTTP_CONTENT_DECODING, 0)
        if !request.headerLines.contains(where: { ResponseHead.isField($0, named: "Accept-Encoding") }) {
            decodesCodings = true
        }
        _ = keyjar_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, errorBuffer)
        _ = keyjar_easy_setopt_write_function(easy, CURLOPT_WRITEFUNCTION, Self.writeCallback)
        _ = keyjar_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context)
        _ = keyjar_easy_setopt_write_function(easy, CURLOPT_HEADERFUNCTION, Self.headerCallback)
        _ = keyjar_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context)
        // Proxy CONNECT responses are the proxy's business, not a response of the request.
        set(CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)

        // Foundation's timeoutInterval is an idle timeout: it fires when no byte moved for
        // that long, not after a total duration.
        set(CURLOPT_CONNECTTIMEOUT_MS, Int(min(request.idleTimeoutSeconds * 1000, Double(Int32.max))))

        for line in request.headerLines { headerList = line.withCString { curl_slist_append(headerList, $0) } }
        if decodesCodings { headerList = curl_slist_append(headerList, ContentCoding.acceptEncodingLine) }
        // libcurl would otherwise add "Expect: 100-continue" to large bodies and wait for it;
        // without a body there is nothing to suppress (and one field less to check).
        if case .none = request.body {} else { headerList = curl_slist_append(headerList, "Expect:") }
        if headerList != nil { _ = keyjar_easy_setopt_list(easy, CURLOPT_HTTPHEADER, headerList) }

        let method = request.method.uppercased()
        switch request.body {
        case .none:
            switch method {
            case "GET": set(CURLOPT_HTTPGET, 1)
            case "HEAD": set(CURLOPT_NOBODY, 1)
            case "POST":
                set(CURLOPT_POST, 1)
                set(CURLOPT_POSTFIELDSIZE_LARGE, offset: 0)
            default: set(CURLOPT_CUSTOMREQUEST, method)
            }
        case .data(let data):
            configureUpload(method: method, length: Int64(data.count))
        case .stream(_, let length), .spooling(_, let length):
            configureUpload(method: method, length: length ?? -1)
        case .spooled(let body):
            configureUpload(method: method, length: body.length)
        }
        if let authentication = request.curlAuthentication {
            set(CURLOPT_HTTPAUTH, authentication.scheme)
            set(CURLOPT_USERNAME, authentication.user)
            set(CURLOPT_PASSWORD, authentication.password)
        }
        if let proxy = request.proxy { set(CURLOPT_PROXY, proxy.absoluteString) }
        if let authentication = request.curlProxyAuthentication {
            set(CURLOPT_PROXYAUTH, authentication.scheme)
            set(CURLOPT_PROXYUSERNAME, authentication.user)
            set(CURLOPT_PROXYPASSWORD, authentication.password)
        }
        CurlTLSOptions.apply(
            pins: request.acceptedKeyPins,
            anchors: request.trustAnchors,
            identity: request.clientCertificate,
            to: easy
        )
    }

    private func configureUpload(method: String, length: Int64) {
        expectedUpload = length
        set(CURLOPT_POST, 1)
        set(CURLOPT_POSTFIELDSIZE_LARGE, offset: length)
        if method != "POST" { set(CURLOPT_CUSTOMREQUEST, method) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        _ = keyjar_easy_setopt_read_function(easy, Self.readCallback)
        _ = keyjar_easy_setopt_pointer(easy, CURLOPT_READDATA, context)
        _ = keyjar_easy_setopt_xferinfo_function(easy, Self.progressCallback)
        _ = keyjar_easy_setopt_pointer(easy, CURLOPT_XFERINFODATA, context)
        set(CURLOPT_NOPROGRESS, 0)
    }

    private func set(_ option: CURLoption, _ value: Int) { _ = keyjar_easy_setopt_long(easy, option, value) }
    private func set(_ option: CURLoption, offset value: Int64) {
        _ = keyjar_easy_setopt_offset(easy, option, curl_off_t(value))
    }
    /// Through `withCString`: passing a String straight to a C pointer copies a small
    /// (inline) string into a new heap array, one allocation per option.
    private func set(_ option: CURLoption, _ value: String) {
        _ = value.withCString { keyjar_easy_setopt_string(easy, option, $0) }
    }

    /// The receiver delivered `count` bytes; a paused transfer continues once it has room.
    package func consumed(_ count: Int) {
        let left = unread.subtract(count, ordering: .relaxed).newValue
        if left < Self.resumeThreshold,
            paused.compareExchange(expected: true, desired: false, ordering: .relaxed).exchanged
        {
            CurlEngine.shared.resume(self)
        }
    }

    /// Marks that bytes moved (engine thread).
    package func touch(at now: UInt64 = DispatchTime.now().uptimeNanoseconds) { lastActivity = now }

    func isIdle(at now: UInt64) -> Bool { now > lastActivity && now - lastActivity > idleTimeout }

    /// Called by the engine once the handle left the multi handle (or could not join it).
    package func complete(_ code: CURLcode) {
        guard !completed else { return }
        completed = true
        if !isHTTP, !startedNonHTTP, code == CURLE_OK { startNonHTTPResponse() }
        var osErrno = 0
        _ = keyjar_easy_getinfo_long(easy, CURLINFO_OS_ERRNO, &osErrno)
        let message = String(cString: errorBuffer)
        // The write callback refused the body it could not decode: a coding error, not a write error.
        let code = decodingProblem == nil ? code : CURLE_BAD_CONTENT_ENCODING
        receive(
            .completed(
                CurlResult(
                    code: code.rawValue,
                    message: decodingProblem ?? (message.isEmpty ? String(cString: curl_easy_strerror(code)) : message),
                    osErrno: osErrno,
                    headProblem: headProblem,
                    decodingProblem: decodingProblem
                )
            )
        )
    }

    private func startNonHTTPResponse() {
        startedNonHTTP = true
        var length: curl_off_t = -1
        _ = keyjar_easy_getinfo_offset(easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
        receive(.nonHTTPResponse(expectedLength: Int64(length)))
    }

    // MARK: libcurl callbacks (engine thread)

    private static let writeCallback: curl_write_callback = { pointer, size, count, context in
        guard let pointer, let context else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
        let length = size * count
        transfer.touch()
        if transfer.unread.load(ordering: .relaxed) > pauseThreshold {
            transfer.paused.store(true, ordering: .relaxed)
            // The receiver may have caught up between the check and the store.
            if transfer.unread.load(ordering: .relaxed) >= resumeThreshold {
                transfer.pauses.add(1, ordering: .relaxed)
                return Int(CURL_WRITEFUNC_PAUSE)
            }
            transfer.paused.store(false, ordering: .relaxed)
        }
        if !transfer.isHTTP, !transfer.startedNonHTTP { transfer.startNonHTTPResponse() }
        guard let decoder = transfer.decoder else {
            transfer.unread.add(length, ordering: .relaxed)
            transfer.receive(.data(Data(bytes: pointer, count: length)))
            return length
        }
        do throws(ContentDecodingError) {
            try decoder.decode(UnsafeRawBufferPointer(start: pointer, count: length)) { piece in
                transfer.unread.add(piece.count, ordering: .relaxed)
                transfer.receive(.data(Data(piece)))
            }
        } catch {
            transfer.decodingProblem = error.description
            return 0
        }
        return length
    }

    private static let headerCallback: curl_write_callback = { pointer, size, count, context in
        guard let pointer, let context else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
        let length = size * count
        transfer.touch()
        // file: and ftp: "headers" are protocol chatter, not a response head.
        guard transfer.isHTTP else { return length }
        let bytes = UnsafeBufferPointer(
            start: UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self),
            count: length
        )
        switch transfer.headParser.consume(bytes) {
        case .incomplete: return length
        case .head(let head):
            // Every final head starts a body of its own (libcurl's authentication rounds).
            transfer.decoder = nil
            if transfer.decodesCodings, let plan = ContentCoding.decodingPlan(for: head) {
                do throws(ContentDecodingError) {
                    transfer.decoder = try ContentDecoder(plan)
                } catch {
                    transfer.decodingProblem = error.description
                    return 0
                }
            }
            transfer.receive(.head(head))
            return length
        case .tooLarge:
            transfer.headProblem =
                "the server sent more than \(ResponseHeadParser.maximumHeadBytes / 1024) KiB or \(ResponseHeadParser.maximumFieldCount) fields of response headers"
            return 0
        case .malformed(let reason):
            transfer.headProblem = reason
            return 0
        }
    }

    private static let readCallback: curl_read_callback = { buffer, size, count, context in
        guard let buffer, let context else { return Int(CURL_READFUNC_ABORT) }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
        let capacity = size * count
        transfer.touch()
        switch transfer.body {
        case .none:
            return 0
        case .data(let data):
            let length = min(capacity, data.count - transfer.bodyOffset)
            guard length > 0 else { return 0 }
            data.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                UnsafeMutableRawPointer(buffer).copyMemory(
                    from: base.advanced(by: transfer.bodyOffset),
                    byteCount: length
                )
            }
            transfer.bodyOffset += length
            return length
        case .stream(let stream, _):
            let read = buffer.withMemoryRebound(to: UInt8.self, capacity: capacity) {
                stream.read(into: $0, capacity: capacity)
            }
            return read < 0 ? Int(CURL_READFUNC_ABORT) : read
        case .spooling(let spool, _):
            let read = buffer.withMemoryRebound(to: UInt8.self, capacity: capacity) {
                spool.readThrough(into: $0, capacity: capacity)
            }
            return read < 0 ? Int(CURL_READFUNC_ABORT) : read
        case .spooled(let body):
            let read = buffer.withMemoryRebound(to: UInt8.self, capacity: capacity) {
                body.read(into: $0, capacity: capacity)
            }
            return read < 0 ? Int(CURL_READFUNC_ABORT) : read
        }
    }

    private static let progressCallback: curl_xferinfo_callback = { context, _, _, _, uploaded in
        guard let context else { return 0 }
        let transfer = Unmanaged<CurlTransfer>.fromOpaque(context).takeUnretainedValue()
        if uploaded > transfer.lastReportedUpload {
            transfer.lastReportedUpload = Int64(uploaded)
            transfer.receive(.sent(total: Int64(uploaded), expected: transfer.expectedUpload))
        }
        return 0
    }
}
