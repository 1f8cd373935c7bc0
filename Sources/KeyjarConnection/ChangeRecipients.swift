import FoundationEssentials
import KeyjarCore

/// Who in this process hears the changes a client's replica applies: its ``KeyjarClient/changes()``
/// streams, its listeners (``KeyjarClient/addListener(_:)``), the notifications it posts for
/// itself and for the storages made on it, and the storages' observers. Whether any of them
/// wants changes decides whether keyjard pushes every change to the process; who they are when
/// a change is applied is its ``KeyjarClient/Audience``. A value under the client's state lock,
/// without I/O, so its rules are tested alone.
struct ChangeRecipients: Sendable {
    private var streams: [UUID: AsyncStream<SequencedEvent>.Continuation] = [:]
    /// The listeners in place, oldest first: an array, so that each change's audience shares
    /// it rather than copying it.
    private var callbacks: [KeyjarClient.Callback] = []
    /// Whether changes are posted with the client as object.
    private(set) var postsForClient = false
    /// What posts for the client and its storages on `NotificationCenter` (the `Keyjar`
    /// module's), once one of them asked to.
    private var poster: (any NotificationPoster)?
    /// The storages made on the client, which post its changes with themselves as object.
    private var targets: [NotificationTarget] = []
    /// How many observers added through a storage's `addObserver` are in place.
    private var observations = 0

    /// Whether anything wants to hear changes as they happen.
    var wantChanges: Bool {
        postsForClient || observations > 0 || !streams.isEmpty || !callbacks.isEmpty
    }

    /// Who is told of a change applied now; nil when nobody is. Storages that are gone are
    /// forgotten.
    mutating func audience() -> KeyjarClient.Audience? {
        targets.removeAll { $0.object == nil }
        guard postsForClient || !streams.isEmpty || !callbacks.isEmpty || !targets.isEmpty else { return nil }
        return KeyjarClient.Audience(
            callbacks: callbacks,
            streams: Array(streams.values),
            postsForClient: postsForClient,
            targets: targets,
            poster: poster
        )
    }

    mutating func addStream(_ continuation: AsyncStream<SequencedEvent>.Continuation, id: UUID) {
        streams[id] = continuation
    }

    mutating func removeStream(id: UUID) { streams[id] = nil }

    mutating func addCallback(_ callback: KeyjarClient.Callback) { callbacks.append(callback) }

    /// Removes the listener that `active` switches; the removed one, to be released by the
    /// caller once no lock is held (what its body captured may need the client).
    mutating func removeCallback(switchedBy active: ListenerSwitch) -> KeyjarClient.Callback? {
        guard let index = callbacks.firstIndex(where: { $0.active === active }) else { return nil }
        return callbacks.remove(at: index)
    }

    mutating func startPosting(with poster: any NotificationPoster) {
        postsForClient = true
        self.poster = poster
    }

    mutating func stopPosting() { postsForClient = false }

    /// Posts changes of `kind` for `storage` for as long as it exists.
    mutating func addTarget(
        _ storage: any AnyObject & Sendable,
        kind: NotificationTarget.Kind,
        poster: any NotificationPoster
    ) {
        targets.removeAll { $0.object == nil }
        targets.append(NotificationTarget(object: storage, kind: kind))
        self.poster = poster
    }

    mutating func observationBegan() { observations += 1 }

    mutating func observationEnded() { observations -= 1 }
}
