import KeyjarCore
import KeyjarProtocol
import KeyjarStore
import Logging
import NIOCore
import NIOPosix

/// keyjard's credentials, each a record in the database paired with its secrets in the secret
/// store: it writes both halves of a credential or neither, keeps them in pairs when another
/// program changes the store (CredentialKeeper+SecretsWatch.swift) or a crash cut a write short
/// (CredentialKeeper+SecretsAtStart.swift), and refreshes a token once for every process
/// (CredentialKeeper+Tokens.swift).
///
/// It owns what only credential work uses: the lane that runs that work one at a time, the
/// secret store's watch and its audit schedule, and the token refresh leases. Its records are
/// committed through the ``StoreService`` it belongs to, which logs them and tells every client.
/// All of it runs on the service's event loop; Secret Service calls, which cross D-Bus, run on a
/// thread pool.
final class CredentialKeeper: Sendable {
    typealias LeaseKey = TokenRefreshLeases<EventLoopPromise<Void>>.Key

    /// What the keeper owns, reachable only on its event loop.
    final class State {
        /// The secret store in use, and how it is named: the one keyjard started with, until a
        /// migration switches them (CredentialKeeper+Migration.swift).
        var secrets: any SecretStore
        var backend: ServerConfiguration.Secrets
        /// The end of the credential work queued so far (see ``CredentialKeeper/inLane(_:)``).
        var lane: EventLoopFuture<Void>?
        /// The secret store's watch (``CredentialKeeper/watchSecrets()``) and when its signals
        /// make keyjard compare the store with its records.
        var secretsWatch: (any SecretStoreWatch)?
        var secretsAudit = SecretsAuditSchedule()
        /// Token refreshes in progress and the requests waiting for them.
        var tokenLeases = TokenRefreshLeases<EventLoopPromise<Void>>()
        /// Set when keyjard shuts down: no audit or watch starts after it.
        var isStopped = false
        /// Failed unlocks in a row, and when the next may be tried (``UnlockAttempts``).
        var unlockAttempts = UnlockAttempts()
        /// The end of the unlocks queued so far: they are tried one at a time.
        var unlockLane: EventLoopFuture<Void>?
        /// How long the open encrypted file may go unused, and the next look at whether it has;
        /// each unlock and lock starts a new round, and a look of an older round does nothing.
        var idleLock = IdleLock()
        var idleCheck: Scheduled<Void>?
        var idleRound: UInt64 = 0

        init(secrets: any SecretStore, backend: ServerConfiguration.Secrets) {
            self.secrets = secrets
            self.backend = backend
        }
    }

    let eventLoop: any EventLoop
    let database: StoreDatabase
    let threadPool: NIOThreadPool
    let logger: Logger
    /// The service this keeper belongs to (and which owns it): every record is committed, and
    /// every storage failure reported, there.
    unowned let store: StoreService
    private let box: NIOLoopBoundBox<State>

    /// The state; only on the event loop (checked).
    var state: State { box.value }

    init(
        store: StoreService,
        secrets: any SecretStore,
        backend: ServerConfiguration.Secrets,
        threadPool: NIOThreadPool
    ) {
        self.store = store
        eventLoop = store.eventLoop
        database = store.database
        logger = store.logger
        self.threadPool = threadPool
        box = NIOLoopBoundBox.makeBoxSendingValue(
            State(secrets: secrets, backend: backend),
            eventLoop: store.eventLoop
        )
    }

    /// The secret store in use (on the loop; work off it is handed the store by ``offLoop(_:)``).
    var secrets: any SecretStore { state.secrets }
    var backend: ServerConfiguration.Secrets { state.backend }

    /// Runs credential work that writes both the secret store and the database, or compares
    /// them, after the work queued before it has finished: no comparison ever sees half of a
    /// write in progress, and two writes of one credential cannot interleave their halves.
    func inLane<T: Sendable>(_ work: @escaping @Sendable () -> EventLoopFuture<T>) -> EventLoopFuture<T> {
        let previous = state.lane ?? eventLoop.makeSucceededVoidFuture()
        let result = previous.flatMap { work() }
        state.lane = result.map { _ in }.recover { _ in }
        return result
    }

    /// A client's connection closed: a refresh it held is someone else's to do.
    func clientLeft(_ id: UInt64) {
        for waiter in state.tokenLeases.releaseAll(heldBy: id) { waiter.succeed() }
    }

    /// keyjard is shutting down: the watch ends, and no audit starts. At the end of the login
    /// session the open encrypted file's key kept for a restart is forgotten.
    func stop(endingSession: Bool) {
        if endingSession { (secrets as? EncryptedSecretStore)?.forgetInSessionKeyring() }
        state.isStopped = true
        state.secretsWatch?.cancel()
        state.secretsWatch = nil
        state.idleCheck?.cancel()
        state.idleCheck = nil
    }

    func records() throws(WireError) -> [CredentialRecord] {
        do { return try database.credentialRecords() } catch { throw store.storageFailure(error) }
    }

    func hasCredential(_ space: ProtectionSpace, user: String) throws(WireError) -> Bool {
        try record(space, user: user) != nil
    }

    func record(_ space: ProtectionSpace, user: String) throws(WireError) -> CredentialRecord? {
        try records().first { $0.space == space && $0.user == user }
    }

    /// Runs a Secret Service call on the thread pool (it blocks on D-Bus) and comes back to the
    /// loop; failures become a wire error that says what to do and never includes a password.
    func offLoop<T: Sendable>(_ body: @escaping @Sendable (any SecretStore) throws -> T) -> EventLoopFuture<T> {
        let secrets = self.secrets
        return threadPool.runIfActive(eventLoop: eventLoop) { try body(secrets) }.flatMapErrorThrowing { error in
            if let error = error as? SecretStoreError {
                let code =
                    switch error.code {
                    case .fileLocked: WireError.secretsLocked
                    case .wrongPassphrase: WireError.wrongPassphrase
                    default: WireError.secretsUnavailable
                    }
                throw WireError(code: code, message: error.description)
            }
            if let error = error as? WireError { throw error }
            throw WireError(code: WireError.secretsUnavailable, message: "the secret store failed: \(error)")
        }
    }
}
