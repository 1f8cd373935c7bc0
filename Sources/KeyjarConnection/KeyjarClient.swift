import Dispatch
public import FoundationEssentials
public import KeyjarCore
import KeyjarLocks
import KeyjarProtocol

/// A process's connection to keyjard, in one of two modes.
///
/// **With a replica** (the default, what an application's cookie storage uses): a local copy
/// of the shared cookie jar, policy and credential list (never passwords). Reads (a Cookie
/// header, the cookie list) are answered from the replica. Before each one the client compares
/// its replica's sequence number with keyjard's last committed one, which keyjard publishes in
/// a shared page beside its socket (`SequencePage`): one atomic load. When another process
/// has changed something since, the lookup first catches up (one round trip for the missed
/// events), so a lookup that starts after any process's write was acknowledged sees it. Writes
/// go to keyjard and return once committed, the replica already holding their result.
///
/// Nothing else happens while the process does not *listen*: keyjard sends it no changes and
/// no thread of it wakes up, whatever other processes do. It listens while a ``changes()``
/// stream is open, a listener is in place (``addListener(_:)``), a storage's observer is in
/// place (`SharedCookieStorage.addObserver(forName:queue:using:)`), or after
/// `startPostingNotifications()` (from `Keyjar`): keyjard then pushes every change, a
/// reader thread applies it and announces it, in order, with its sequence number; when the
/// connection is lost that thread reconnects with backoff and resynchronises from the last
/// sequence number it saw, so no change is missed. A client that does not listen connects
/// again on its next call.
///
/// **One-shot** (``Configuration/keepsReplica`` off: `keyjar`, git's credential helper): no
/// snapshot, no subscription, no thread. Each call sends its request and reads its reply on the
/// calling thread; a lost connection is made again by the next call.
///
/// If no keyjard answers, one is started (unless `KEYJAR_NO_AUTOSTART=1`). The typed requests
/// (cookies, credentials, policy, status, import and export) are in the extensions
/// `KeyjarClient+Cookies`, `+Credentials` and `+Service`; listening and catching up are in
/// `KeyjarClient+Listening`.
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
        /// Keep a replica of the jar (what lookups, notifications and change streams need).
        /// Off for a one-shot client that only sends requests: nothing is downloaded or pushed,
        /// and no thread runs.
        public var keepsReplica: Bool
        /// The database this client's data lives in, by which it finds the keyjard serving it
        /// when none answers on `socketPath` (`KeyjarPaths.defaultDatabasePath()`:
        /// `$KEYJAR_DATABASE`, else under `$XDG_DATA_HOME`).
        public var databasePath: String

        public init(
            socketPath: String = KeyjarClient.defaultSocketPath,
            autoStart: Bool = ProcessInfo.processInfo.environment["KEYJAR_NO_AUTOSTART"] != "1",
            clientName: String = ProcessInfo.processInfo.processName,
            requestTimeout: TimeInterval = KeyjarClient.defaultRequestTimeout,
            keepsReplica: Bool = true,
            databasePath: String = KeyjarPaths.defaultDatabasePath()
        ) {
            self.databasePath = KeyjarPaths.absolute(databasePath)
            // Relative to this process's working directory, as a user who typed it means.
            self.socketPath = KeyjarPaths.absolute(socketPath)
            self.autoStart = autoStart
            self.clientName = clientName
            self.requestTimeout = requestTimeout
            self.keepsReplica = keepsReplica
        }
    }

    /// How long a request waits for keyjard's answer unless configured otherwise:
    /// `$KEYJAR_TIMEOUT` seconds, else 30. A keyjard that is stopped (SIGSTOP, a debugger)
    /// accepts connections without answering; this is how long every call waits for it.
    public static var defaultRequestTimeout: TimeInterval {
        ProcessInfo.processInfo.environment["KEYJAR_TIMEOUT"].flatMap(TimeInterval.init).flatMap { $0 > 0 ? $0 : nil }
            ?? 30
    }

    /// A duration in seconds as messages show it: "30 s", "0.5 s".
    static func seconds(_ value: TimeInterval) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    /// keyjard's socket unless configured otherwise: `$KEYJAR_SOCKET`, else
    /// `$XDG_RUNTIME_DIR/keyjar/keyjar.sock`.
    public static var defaultSocketPath: String { KeyjarPaths.defaultSocketPath() }

    /// Where this client reaches keyjard: the configured socket, or the one of the keyjard
    /// that already served this client's database when nothing answered there.
    var servingSocketPath: String { state.withLock { $0.servingSocket } ?? configuration.socketPath }

    struct State: Sendable {
        var replica: Replica
        /// The connection's lifecycle and the requests waiting on it.
        var connection = ClientConnectionStateMachine<Waiter>()
        /// Who hears the changes the replica applies.
        var recipients = ChangeRecipients()
        /// keyjard's page of its last committed sequence number; nil for a one-shot client, or
        /// when keyjard has none (then the client always listens, to stay current).
        var page: SequencePage.Reader?
        /// Announcements not yet made, oldest first; `announcing` while a thread makes them.
        var announcements: [Announcement] = []
        var announcing = false
        /// The socket of the keyjard that serves this client's database, when that is not the
        /// configured one (``KeyjardLauncher/ensureRunning(socketPath:database:timeout:)``).
        var servingSocket: String?

        /// Whether keyjard should push every change: something listens, or there is no other
        /// way to know of changes.
        var listens: Bool { recipients.wantChanges || page == nil }

        /// Whether the replica holds everything keyjard has committed (as far as it can know).
        @inline(__always)
        var isCurrent: Bool {
            guard let page else { return true }
            return page.latest == replica.sequence
        }
    }

    public let configuration: Configuration
    let state: Locked<State>
    /// Taken before `state` when both are needed, never the other way round. The reader thread
    /// holds it while it waits in the socket; any other thread only ever tries it.
    let receiving = ReceiveSide()
    /// Serialises frames written by several threads; holds how many were sent (a lock around
    /// an empty value shares its address with the lock's own fields, which ThreadSanitizer
    /// then mistook for a race).
    let sendLock = Locked(0)
    /// Held by the one thread in the connection's `connecting` state (a caller of a client
    /// without a reader thread, or the reader thread), so that a second one waits for that
    /// connection rather than make its own; holds how many were made.
    let connectLock = Locked(0)

    /// Connects (starting keyjard if allowed and needed); with a replica, also loads it (and,
    /// when keyjard publishes no sequence page, listens, as the only way to stay current).
    /// - Throws: ``KeyjarClientError`` with code `.unreachable` when no keyjard can be reached.
    public init(configuration: Configuration = Configuration()) throws(KeyjarClientError) {
        self.configuration = configuration
        // A one-shot client never reads its replica: its empty jar needs no suffix list, which
        // would be loaded for nothing.
        let jar = configuration.keepsReplica ? CookieJar() : CookieJar(publicSuffixes: .unavailable())
        state = Locked(State(replica: Replica(jar: jar)))
        _ = try connectLock.withLock { (connections: inout Int) throws(KeyjarClientError) -> UnixSocket in
            try connect(resuming: false, connections: &connections)
        }
        announcePending()
        if isListening { startReaderThread() }
    }

    /// Connects as ``init(configuration:)`` does, without holding a thread of the caller's
    /// meanwhile: connecting may start keyjard and wait for it (up to 10 s, or
    /// `KEYJAR_START_TIMEOUT`), and loads the replica.
    public static func connect(
        configuration: Configuration = Configuration()
    ) async throws(KeyjarClientError)
        -> KeyjarClient
    {
        try await awaitBlockingCall { () throws(KeyjarClientError) in try KeyjarClient(configuration: configuration) }
    }

    deinit {
        close()
    }

    /// Disconnects for good; later calls fail with `.unreachable`.
    public func close() {
        state.withLock { $0.connection.close() }?.shutdownBoth()
    }

    /// The sequence number of the last change the replica holds.
    public var sequence: UInt64 { state.withLock { $0.replica.sequence } }

    /// Whether a connection to keyjard is up right now.
    public var isConnected: Bool { state.withLock { $0.connection.socket != nil } }

    /// Every change as it is applied to this process's replica: what changed, its cause, its
    /// sequence number. Each call returns a new stream; while one is open the process listens
    /// (keyjard pushes every change to it). A one-shot client has no replica: its streams end
    /// at once.
    public func changes() -> AsyncStream<SequencedEvent> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: SequencedEvent.self,
            bufferingPolicy: .bufferingNewest(4096)
        )
        guard configuration.keepsReplica else {
            continuation.finish()
            return stream
        }
        let id = UUID()
        state.withLock { $0.recipients.addStream(continuation, id: id) }
        continuation.onTermination = { [weak self] _ in
            // Not on the terminating thread: a stream can end while that thread holds one of
            // the client's locks (its last reference dropped there), which this needs.
            DispatchQueue.global().async { [weak self] in
                guard let self else { return }
                self.state.withLock { $0.recipients.removeStream(id: id) }
                self.updateListening()
            }
        }
        updateListening()
        return stream
    }

    /// Posts every change through `poster` with this client as object from now on (the
    /// `Keyjar` module's `startPostingNotifications()`); the process listens until
    /// ``stopPostingNotifications()``.
    package func startPosting(with poster: any NotificationPoster) {
        guard configuration.keepsReplica else { return }
        state.withLock { $0.recipients.startPosting(with: poster) }
        updateListening()
    }

    /// Stops posting notifications with this client as object; the process stops listening
    /// unless a ``changes()`` stream is open or a storage's observer is in place.
    public func stopPostingNotifications() {
        state.withLock { $0.recipients.stopPosting() }
        updateListening()
    }

    /// Whether changes are posted as notifications with this client as object.
    public var postsNotifications: Bool { state.withLock { $0.recipients.postsForClient } }

    /// Posts this client's changes of `kind` through `poster` with `storage` as object from now
    /// on, for as long as the storage exists.
    package func addNotificationTarget(
        _ storage: any AnyObject & Sendable,
        kind: NotificationTarget.Kind,
        poster: any NotificationPoster
    ) {
        guard configuration.keepsReplica else { return }
        state.withLock { $0.recipients.addTarget(storage, kind: kind, poster: poster) }
    }

    /// A storage's observer was added: the process listens until it is removed
    /// (``endObservation()``).
    package func beginObservation() {
        guard configuration.keepsReplica else { return }
        state.withLock { $0.recipients.observationBegan() }
        updateListening()
    }

    package func endObservation() {
        guard configuration.keepsReplica else { return }
        state.withLock { $0.recipients.observationEnded() }
        updateListening()
    }

    /// Whether keyjard pushes every change to this process (see ``changes()``).
    public var isListening: Bool { state.withLock { $0.connection.mode == .subscribed } }
}
