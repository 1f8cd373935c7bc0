public import Foundation
public import KeyjarCore
import KeyjarLocks
import KeyjarProtocol
import Synchronization

/// A process's connection to keyjard, in one of two modes.
///
/// **With a replica** (the default, what an application's cookie storage uses): a local copy
/// of the shared cookie jar, policy and credential list (never passwords), kept current by
/// keyjard's change events, which a reader thread applies. Reads (a Cookie header, the cookie
/// list) are answered from the replica, never waiting on the socket. Writes go to keyjard and
/// return once committed; the replica already holds their result then (keyjard sends a change's
/// event before its reply), so a process reads its own writes at once, and every other process
/// as soon as the event reaches it. When keyjard goes away the reader reconnects with backoff
/// and resynchronises from the last sequence number it saw, so no change is missed; calls made
/// meanwhile fail at once with `.unreachable`.
///
/// **One-shot** (``Configuration/keepsReplica`` off: `keyjar`, git's credential helper): no
/// snapshot, no subscription, no thread. Each call sends its request and reads its reply on the
/// calling thread; a lost connection is made again by the next call.
///
/// If no keyjard answers, one is started (unless `KEYJAR_NO_AUTOSTART=1`). The typed requests
/// (cookies, credentials, policy, status, import and export) are in the extensions
/// `KeyjarClient+Cookies`, `+Credentials` and `+Service`.
///
/// ```swift
/// let client = try KeyjarClient(configuration: .init(keepsReplica: false))
/// try client.storeCookies(["sid=1; Secure"], for: URL(string: "https://example.com/")!)
/// try client.cookieHeader(for: URL(string: "https://example.com/")!)   // "sid=1"
/// ```
public final class KeyjarClient: Sendable {
    public struct Configuration: Sendable {
        public var socketPath: String
        /// Start keyjard when none answers; off when `KEYJAR_NO_AUTOSTART=1`.
        public var autoStart: Bool
        public var clientName: String
        public var requestTimeout: TimeInterval
        /// Keep a replica of the jar and subscribe to changes (what lookups, notifications and
        /// change streams need), with a thread that applies them. Off for a one-shot client
        /// that only sends requests: nothing is downloaded or pushed, and no thread runs.
        public var keepsReplica: Bool

        public init(
            socketPath: String = KeyjarClient.defaultSocketPath,
            autoStart: Bool = ProcessInfo.processInfo.environment["KEYJAR_NO_AUTOSTART"] != "1",
            clientName: String = ProcessInfo.processInfo.processName,
            requestTimeout: TimeInterval = 30,
            keepsReplica: Bool = true
        ) {
            self.socketPath = socketPath
            self.autoStart = autoStart
            self.clientName = clientName
            self.requestTimeout = requestTimeout
            self.keepsReplica = keepsReplica
        }
    }

    /// keyjard's socket unless configured otherwise: `$KEYJAR_SOCKET`, else
    /// `$XDG_RUNTIME_DIR/keyjar/keyjar.sock`.
    public static var defaultSocketPath: String { KeyjarPaths.defaultSocketPath() }

    struct State: Sendable {
        var replica: Replica
        var socket: UnixSocket?
        var nextID: UInt64 = 0
        var waiters: [UInt64: Waiter] = [:]
        /// Snapshots asked for after a change too large to push; their replies replace the replica.
        var snapshotRequests: Set<UInt64> = []
        var listeners: [UUID: AsyncStream<SequencedEvent>.Continuation] = [:]
        var closed = false
        /// Announcements not yet made, oldest first; `announcing` while a thread makes them.
        var announcements: [Announcement] = []
        var announcing = false
    }

    public let configuration: Configuration
    let state: Locked<State>
    /// Taken before `state` when both are needed, never the other way round. The reader thread
    /// holds it while it waits in the socket; any other thread only ever tries it.
    let receiving = ReceiveSide()
    /// The reader thread's `pthread_self()`; 0 for a one-shot client.
    let readerThread = Atomic<UInt>(0)
    /// Serialises frames written by several threads; holds how many were sent (a lock around
    /// an empty value shares its address with the lock's own fields, which ThreadSanitizer
    /// then mistook for a race).
    let sendLock = Locked(0)
    /// Serialises a one-shot client's reconnections; holds how many were made.
    let connectLock = Locked(0)

    /// Connects (starting keyjard if allowed and needed); with a replica, also loads it,
    /// subscribes and starts the reader thread.
    /// - Throws: ``KeyjarClientError`` with code `.unreachable` when no keyjard can be reached.
    public init(configuration: Configuration = Configuration()) throws(KeyjarClientError) {
        self.configuration = configuration
        // A one-shot client never reads its replica: its empty jar needs no suffix list, which
        // would be loaded for nothing.
        let jar = configuration.keepsReplica ? CookieJar() : CookieJar(publicSuffixes: .unavailable())
        state = Locked(State(replica: Replica(jar: jar)))
        let reader = try connectAndSynchronise(after: nil)
        install(reader)
        announcePending()
        if configuration.keepsReplica { startReaderThread() }
    }

    deinit {
        close()
    }

    /// Disconnects for good; later calls fail with `.unreachable`.
    public func close() {
        let socket = state.withLock { state -> UnixSocket? in
            state.closed = true
            defer { state.socket = nil }
            return state.socket
        }
        socket?.shutdownBoth()
    }

    /// The sequence number of the last change the replica holds.
    public var sequence: UInt64 { state.withLock { $0.replica.sequence } }

    /// Whether a connection to keyjard is up right now.
    public var isConnected: Bool { state.withLock { $0.socket != nil } }

    /// Every change as it is applied to this process's replica: what changed, its cause, its
    /// sequence number. Each call returns a new stream. A one-shot client has no replica: its
    /// streams stay empty.
    public func changes() -> AsyncStream<SequencedEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: SequencedEvent.self,
            bufferingPolicy: .bufferingNewest(4096)
        )
        let id = UUID()
        state.withLock { $0.listeners[id] = continuation }
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.listeners.removeValue(forKey: id) }
        }
        return stream
    }
}
