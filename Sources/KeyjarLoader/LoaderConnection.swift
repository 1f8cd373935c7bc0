import Foundation
public import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLocks
import KeyjarTransfer
import Synchronization

/// One load of a URL request with NSURLConnection's delegate contract, on libcurl: cookies
/// from the loader's shared jar on every request and redirect hop, every Set-Cookie line kept,
/// redirects and authentication challenges through the delegate, data streamed as it arrives.
///
/// The connection's own decisions run on a private serial queue; the delegate is called on its
/// delegate queue, one message at a time. It keeps its delegate until the load ends.
public final class LoaderConnection: @unchecked Sendable {
    public let originalRequest: URLRequest
    public let loader: URLLoader

    /// The request of the current hop (after redirects and the delegate's changes).
    public var currentRequest: URLRequest { published.withLock { $0.currentRequest } }

    /// A serial queue per connection on the shared, width-limited pool, for a connection
    /// without a blocked caller (`executor` makes its own only if work outlives the caller).
    /// A queue made without a target is an "overcommit" queue, for which libdispatch starts a
    /// thread whenever it has work: a thousand loads in flight then ran on some 250 threads.
    let controlQueue: DispatchQueue?
    /// Set for a load whose caller blocks for the result: the connection's work then runs on
    /// the caller's thread.
    let executor: CallerExecutor?

    /// The protocol of the latest response head: "HTTP/1.1", "HTTP/2", … (Foundation's
    /// HTTPURLResponse does not say).
    public var httpVersion: String? { published.withLock { $0.head?.httpVersion } }

    /// The latest response head as it arrived: the status line, then one `Name: value` line
    /// per field, in order and with repeated fields kept (HTTPURLResponse joins them). For
    /// showing a response (`keyjar fetch -i`); read it in `didReceive(response)`.
    public var responseHeadLines: [String]? { published.withLock { $0.head?.lines } }

    /// How often a slow delegate paused this load's transfers (for tests and diagnostics).
    var backpressurePauses: Int { published.withLock { $0.pauses } }

    /// State other threads read or set.
    struct Published {
        var pauses = 0
        var currentRequest: URLRequest
        var head: ResponseHead?
        var started = false
        /// Set by `cancel()`; delegate messages check it when they run, so none is delivered
        /// after the call returns.
        var cancelled = false
    }
    let published: Locked<Published>

    // Everything below belongs to the connection's serial work (`schedule`): `controlQueue`,
    // or the blocked caller's thread through `executor`.
    /// The delegate and the queue it is called on, until the load ends.
    var channel: DelegateChannel
    /// The lifecycle: the attempt in flight, the challenge waiting, the end.
    var machine = Machine()
    /// The request's body stream across attempts.
    var streamedBody = StreamedRequestBody()
    /// Whether the load is a top-level navigation whose main-document URL follows redirects.
    var followsMainDocument: Bool
    var uploadedSoFar: Int64 = 0
    /// The response cache's part of the load.
    var caching = LoadCaching()
    var authentication = AuthenticationState()
    /// Bytes dropped of the last held body (a redirect's or a challenge's, past its limit).
    var heldBodyDropped = 0
    var tls = TLSState()
    /// The credential storage this load reads and writes; nil when it uses none. Decided once,
    /// before the first attempt (``decideCredentialStorage()``), and only read after.
    private(set) var credentialStorage: (any URLCredentialStorage & Sendable)?

    typealias Machine = LoadStateMachine<CurlTransfer, LoaderProtocol, PendingChallenge>

    init(
        request: URLRequest,
        delegate: (any LoaderConnectionDelegate)?,
        loader: URLLoader,
        delegateQueue: DispatchQueue?,
        startImmediately: Bool,
        executor: CallerExecutor? = nil
    ) {
        // A synchronous load needs no queue of its own: creating and disposing of one, and
        // running each job through it, is a cost per request with nothing to show for it.
        controlQueue = executor == nil ? Self.makeControlQueue() : nil
        self.executor = executor
        originalRequest = request
        self.loader = loader
        let published = Locked(Published(currentRequest: request))
        self.published = published
        channel = DelegateChannel(delegate: delegate, queue: delegateQueue) { published.withLock { $0.cancelled } }
        followsMainDocument = request.mainDocumentURL == nil || request.mainDocumentURL == request.url
        if startImmediately { start() }
    }

    static func makeControlQueue() -> DispatchQueue {
        DispatchQueue(label: "keyjar.loader.connection", target: .global())
    }

    /// Whether a connection of a loader without protocol classes of its own loads `request`:
    /// a protocol class registered for the process does, or its scheme is one the loader loads
    /// itself (http, https, ftp, ftps, file, data). NSURLConnection's `canHandle(_:)`;
    /// ``URLLoader/canHandle(_:)`` answers for a loader with its configuration's classes.
    public static func canHandle(_ request: URLRequest) -> Bool {
        URLLoader.processProtocolClass(for: request) != nil || URLLoader.loadsItself(request)
    }

    /// Starts the load (once; later calls do nothing).
    public func start() {
        let first = published.withLock { state -> Bool in
            defer { state.started = true }
            return !state.started && !state.cancelled
        }
        guard first else { return }
        schedule { self.begin() }
    }

    /// Stops the load. The delegate hears nothing more once this returns, not even a failure.
    public func cancel() {
        published.withLock { $0.cancelled = true }
        schedule {
            if let transfer = self.machine.transfer { CurlEngine.shared.cancel(transfer) }
            self.stopProtocol()
            self.cancelPendingChallenge()
            self.end(.cancelled)
        }
    }

    /// Apple's rule: a delegate that answers challenges itself (`willSendRequestFor`) is not
    /// asked and the storage is used; any other is asked once, before the load.
    func decideCredentialStorage() {
        guard let storage = loader.configuration.credentialStorage else { return }
        if channel.answersChallenges
            || channel.ask({ $0.connectionShouldUseCredentialStorage(self) }, ifNoDelegate: true)
        {
            credentialStorage = storage
        }
    }

    var isCancelled: Bool { published.withLock { $0.cancelled } }

    /// Whether the load is over (finished, failed or cancelled): no more events are handled.
    var hasEnded: Bool { machine.isEnded }

    /// Drops the transfer in flight, whose own end is not the load's (a cached response or a
    /// resent request takes over): libcurl stops it, and its events are no longer heard.
    func abandonTransfer() {
        if let transfer = machine.abandonTransfer() { CurlEngine.shared.cancel(transfer) }
    }

    func finish() {
        channel.deliver { $0.connectionDidFinishLoading(self) }
        end(.finished)
    }

    func fail(_ error: URLError) {
        channel.deliver { $0.connection(self, didFailWithError: error) }
        end(.failed)
    }

    /// The load is over: no more events are handled, and the delegate hears nothing more than
    /// the messages already queued for it.
    func end(_ ending: Machine.Ending) {
        let running = machine.protocolStopped()
        // A transfer still in flight is dropped, not cancelled: it ends by itself and its
        // events are no longer heard.
        guard machine.end(ending) else { return }
        channel.close()
        running?.stopLoading()
        // A load that ends without offering its response to the cache stores nothing of it.
        caching.dropWriting()
        streamedBody.drop()
    }

    /// Runs `work` serially with the connection's other work: on the blocked caller's thread
    /// when there is one, else on the control queue.
    func schedule(_ work: @escaping @Sendable () -> Void) {
        if let executor {
            executor.post(work)
        } else {
            controlQueue?.async(execute: work)
        }
    }
}
