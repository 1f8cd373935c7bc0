import Foundation
import FoundationNetworking
import KeyjarTransfer

/// A connection's line to its delegate, and the one owner of the delegate: messages on the
/// delegate's queue in order, questions answered on it, challenges put as Apple's loader puts
/// them; nothing once the load is cancelled or the channel closed. Belongs to the connection's
/// serial work; only `isCancelled` is read from other threads (the connection's own state).
struct DelegateChannel {
    /// nil once closed (the load ended), or when the caller gave none.
    private var delegate: (any LoaderConnectionDelegate)?
    /// The queue the caller chose for the delegate; nil when it chose none: the delegate is then
    /// called right on the connection's serial work, since a hop to another queue costs a
    /// thread wake-up per message, the largest part of a request's overhead over plain libcurl
    /// (docs/performance.md, Loader).
    let queue: DispatchQueue?
    /// Whether the load was cancelled: a message that runs after that is dropped, so that the
    /// delegate hears nothing once `cancel()` returns.
    private let isCancelled: @Sendable () -> Bool

    init(
        delegate: (any LoaderConnectionDelegate)?,
        queue: DispatchQueue?,
        isCancelled: @escaping @Sendable () -> Bool
    ) {
        self.delegate = delegate
        self.queue = queue
        self.isCancelled = isCancelled
    }

    /// Whether a delegate still listens (there was one, and the load has not ended).
    var isOpen: Bool { delegate != nil }

    /// Drops the delegate, after the messages already queued for it: the load is over.
    mutating func close() { delegate = nil }

    /// Queues a message for the delegate; it is dropped if the load is cancelled first.
    func deliver(_ message: @escaping @Sendable (any LoaderConnectionDelegate) -> Void) {
        deliver(evenAfterCancel: false, message)
    }

    /// `deliver`, for the one message a cancelled load still sends when asked to
    /// (`didCancel` of a challenge the cancellation took away).
    func deliver(
        evenAfterCancel: Bool,
        _ message: @escaping @Sendable (any LoaderConnectionDelegate) -> Void
    ) {
        guard let delegate else { return }
        let isCancelled = isCancelled
        guard let queue else {
            if evenAfterCancel || !isCancelled() { message(delegate) }
            return
        }
        queue.async {
            guard evenAfterCancel || !isCancelled() else { return }
            message(delegate)
        }
    }

    /// Asks the delegate and waits for its answer (willSend, needNewBodyStream, willCache,
    /// whether to use the credential storage); `fallback` without a delegate or once cancelled.
    func ask<Answer: Sendable>(
        _ question: @escaping @Sendable (any LoaderConnectionDelegate) -> Answer,
        ifNoDelegate fallback: Answer
    ) -> Answer {
        guard let delegate else { return fallback }
        guard let queue else { return isCancelled() ? fallback : question(delegate) }
        let isCancelled = isCancelled
        return queue.sync { isCancelled() ? fallback : question(delegate) }
    }

    /// Puts `challenge` to the delegate the way Apple's loader does: `willSendRequestFor` if
    /// the delegate has it; else the older pair (`canAuthenticateAgainst`, then `didReceive
    /// challenge`), a refusal of which is the challenge sender's default handling. False, with
    /// nothing sent, when the delegate has neither: the caller applies default handling itself.
    func present(_ challenge: URLAuthenticationChallenge, to connection: LoaderConnection) -> Bool {
        switch delegate {
        case let delegate as any LoaderConnectionAuthenticationDelegate:
            deliver { _ in delegate.connection(connection, willSendRequestFor: challenge) }
        case let delegate as any LoaderConnectionLegacyAuthenticationDelegate:
            deliver { _ in
                if delegate.connection(connection, canAuthenticateAgainst: challenge.protectionSpace) {
                    delegate.connection(connection, didReceive: challenge)
                } else {
                    challenge.sender?.performDefaultHandling(for: challenge)
                }
            }
        default:
            return false
        }
        return true
    }

    /// Whether the delegate answers challenges itself (`willSendRequestFor`): it is then not
    /// asked whether to use the credential storage, which is used.
    var answersChallenges: Bool { delegate is any LoaderConnectionAuthenticationDelegate }

    /// The delegate as one of the older pair of challenge messages, which it is also asked
    /// about server trust through; nil for any other.
    var legacyAuthentication: (any LoaderConnectionLegacyAuthenticationDelegate)? {
        delegate as? any LoaderConnectionLegacyAuthenticationDelegate
    }

    /// The delegate as a supplier of new request body streams (`needNewBodyStream`), which
    /// opts the load out of keeping a copy of a streamed body; nil for any other.
    var bodyStreamSupplier: (any LoaderConnectionBodyStreamDelegate)? {
        delegate as? any LoaderConnectionBodyStreamDelegate
    }
}
