import FoundationEssentials
import KeyjarCore
import KeyjarLocks
import KeyjarProtocol

extension KeyjarClient {
    /// A change to announce (notification, change streams) once no lock is held, in order.
    enum Announcement: Sendable {
        case event(SequencedEvent, Audience)
        /// The replica was replaced by a snapshot: what changed is not known.
        case resynchronised(Audience)
    }

    /// Who is told of one change: the streams open and the notification posters (the client
    /// itself when asked to, and its storages) when it was applied.
    struct Audience: Sendable {
        /// Listeners, oldest first.
        var callbacks: [Callback]
        var streams: [AsyncStream<SequencedEvent>.Continuation]
        var postsForClient: Bool
        var targets: [NotificationTarget]
        var poster: (any NotificationPoster)?
    }

    func apply(_ snapshot: StoreSnapshot) {
        let replica = Replica(snapshot)
        state.withLock { state in
            state.replica = replica
            if let audience = state.recipients.audience() { state.announcements.append(.resynchronised(audience)) }
        }
    }

    func apply(_ event: SequencedEvent) {
        // An event the replica already has (replayed after a reconnect) is not announced twice.
        state.withLock { state in
            guard state.replica.apply(event) else { return }
            // Announced to whoever is there, a catching-up lookup's events included: a storage
            // posts every change its replica applies, as Foundation's post their own.
            if let audience = state.recipients.audience() { state.announcements.append(.event(event, audience)) }
        }
    }

    /// Makes the pending announcements, oldest first, on this thread, unless another thread
    /// is already making them (it then makes these too). No lock is held meanwhile, so an
    /// observer may call back into the client, even write.
    func announcePending() {
        var batch = state.withLock { state -> [Announcement]? in
            guard !state.announcing, !state.announcements.isEmpty else { return nil }
            state.announcing = true
            defer { state.announcements.removeAll() }
            return state.announcements
        }
        while let current = batch {
            for announcement in current {
                switch announcement {
                case .event(let event, let audience):
                    for callback in audience.callbacks { callback(.event(event)) }
                    for stream in audience.streams { stream.yield(event) }
                    audience.poster?.post(event, client: audience.postsForClient ? self : nil, audience.targets)
                case .resynchronised(let audience):
                    for callback in audience.callbacks { callback(.resynchronised) }
                    audience.poster?.postResynchronised(client: audience.postsForClient ? self : nil, audience.targets)
                }
            }
            batch = state.withLock { state -> [Announcement]? in
                guard !state.announcements.isEmpty else {
                    state.announcing = false
                    return nil
                }
                defer { state.announcements.removeAll() }
                return state.announcements
            }
        }
    }
}
