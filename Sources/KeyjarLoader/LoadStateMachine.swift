import Foundation
import FoundationNetworking
import KeyjarTransfer

/// A ``LoaderConnection``'s lifecycle as a value: which attempt is in flight (on libcurl or a
/// registered protocol) and what its body is for, which challenge waits for its answer, how
/// many redirects were followed, and whether the load ended. The connection's serial work
/// feeds it what happened and does what it answers (starting and stopping transfers, talking
/// to the delegate); it does no I/O itself, so every state × event is tested without a server
/// (`LoadStateMachineTests`).
///
/// Generic over the transfer, the protocol and the challenge only so that tests can stand in
/// tokens for them. What the connection knows across attempts that is not lifecycle
/// (authentication, TLS, the cache, the request body's copy) stays in plain fields beside it.
///
/// ```
/// created ─begin─▶ preparing ─transferStarted─▶ transferring ─transferCompleted─▶ preparing
///                  preparing ─protocolStarted─▶ loadingProtocol ─protocolStopped─▶ preparing
///                  preparing ─challengePresented─▶ challenged ─challengeResolved─▶ preparing
/// every state but ended ─end─▶ ended (finished, failed or cancelled)
/// ```
struct LoadStateMachine<Transfer: AnyObject, Protocol: AnyObject, Challenge> {
    /// What the body of a libcurl attempt is for.
    enum Body {
        /// No response head yet.
        case awaitingHead
        /// Body bytes go to the delegate.
        case streaming
        /// A multipart/x-mixed-replace body, split into parts delivered as responses of their own.
        case splitting(MultipartReplaceSplitter, head: ResponseHead)
        /// A redirect or a challenge: its body is kept until we know whether it is delivered.
        case holding(ResponseHead, HTTPURLResponse, HeldBody)
    }

    /// A held response's body, up to ``limit`` bytes: a redirect's or a challenge's body is
    /// rarely read, and one that decodes to gigabytes (a gzip bomb in a 302) must not be kept.
    /// What comes beyond the limit is counted and dropped.
    struct HeldBody: Equatable {
        static var limit: Int { 1 << 20 }

        private(set) var data = Data()
        /// Bytes dropped past the limit.
        private(set) var dropped = 0

        init(_ data: Data = Data()) { append(data) }

        mutating func append(_ bytes: Data) {
            let kept = max(0, min(bytes.count, Self.limit - data.count))
            if kept == bytes.count {
                data.append(bytes)
            } else {
                data.append(bytes.prefix(kept))
                dropped += bytes.count - kept
            }
        }
    }

    enum Ending: Equatable {
        /// The delegate heard `connectionDidFinishLoading`.
        case finished
        /// The delegate heard `didFailWithError`.
        case failed
        /// By `cancel()`: the delegate hears nothing.
        case cancelled
    }

    enum State {
        /// Made; `start()` schedules the beginning.
        case created
        /// No attempt in flight: the connection decides what comes next (the first request,
        /// the cache, a redirect, a challenge's answer, a retry).
        case preparing
        /// An attempt on libcurl.
        case transferring(attempt: Int, Transfer, Body)
        /// An attempt by a registered protocol.
        case loadingProtocol(attempt: Int, Protocol)
        /// A challenge waits for the delegate's answer (its sender's number).
        case challenged(number: Int, Challenge)
        /// Over: no more events are handled.
        case ended(Ending)
    }

    /// What to do with body bytes of the current transfer.
    enum Bytes {
        /// Kept with the held response.
        case held
        /// Split: deliver these pieces of the multipart body.
        case parts([MultipartReplaceSplitter.Piece], head: ResponseHead)
        /// Deliver them as they are.
        case deliver
    }

    private(set) var state = State.created
    /// Attempts made so far: an event of an earlier one is not heard.
    private(set) var attempts = 0
    /// Redirects followed so far.
    private(set) var redirects = 0
    /// Challenges presented so far: an answer to an earlier one is ignored.
    private(set) var challenges = 0

    var isEnded: Bool {
        if case .ended = state { true } else { false }
    }

    /// The transfer in flight, if any.
    var transfer: Transfer? {
        if case .transferring(_, let transfer, _) = state { transfer } else { nil }
    }

    // MARK: Attempts

    /// The load begins (on the connection's serial work): true the first time.
    mutating func begin() -> Bool {
        guard case .created = state else { return false }
        state = .preparing
        return true
    }

    /// The number of the attempt about to start; nil unless one may start now (between
    /// attempts).
    mutating func nextAttempt() -> Int? {
        guard case .preparing = state else { return nil }
        attempts += 1
        return attempts
    }

    /// Attempt `number` runs on `transfer`.
    mutating func transferStarted(_ transfer: Transfer, attempt number: Int) {
        guard case .preparing = state, number == attempts else { return }
        state = .transferring(attempt: number, transfer, .awaitingHead)
    }

    /// Attempt `number` runs on a registered protocol.
    mutating func protocolStarted(_ instance: Protocol, attempt number: Int) {
        guard case .preparing = state, number == attempts else { return }
        state = .loadingProtocol(attempt: number, instance)
    }

    /// The transfer an event of attempt `number` is about; nil when it is not heard (an
    /// earlier attempt, or none in flight).
    func transfer(forAttempt number: Int) -> Transfer? {
        guard case .transferring(let current, let transfer, _) = state, current == number else { return nil }
        return transfer
    }

    /// Whether an event of a protocol's attempt `number` is heard.
    func isProtocolCurrent(attempt number: Int) -> Bool {
        guard case .loadingProtocol(let current, _) = state else { return false }
        return current == number
    }

    /// The body of the current transfer is for `body` (its head arrived).
    mutating func bodyIs(_ body: Body) {
        guard case .transferring(let number, let transfer, _) = state else { return }
        state = .transferring(attempt: number, transfer, body)
    }

    /// Body bytes of the current transfer arrived; nil when none is in flight.
    mutating func dataArrived(_ data: Data) -> Bytes? {
        switch state {
        case .transferring(_, _, .awaitingHead), .transferring(_, _, .streaming):
            return .deliver
        case .transferring(let number, let transfer, .holding(let head, let response, var held)):
            // Out of the state while appended, so that the bytes held are not copied (and
            // never more than HeldBody's limit of them).
            state = .preparing
            held.append(data)
            state = .transferring(attempt: number, transfer, .holding(head, response, held))
            return .held
        case .transferring(let number, let transfer, .splitting(var splitter, let head)):
            state = .preparing
            let pieces = splitter.feed(data)
            state = .transferring(attempt: number, transfer, .splitting(splitter, head: head))
            return .parts(pieces, head: head)
        case .created, .preparing, .loadingProtocol, .challenged, .ended:
            return nil
        }
    }

    /// The transfer's end: what its body was for; nil when none is in flight.
    mutating func transferCompleted() -> Body? {
        guard case .transferring(_, _, let body) = state else { return nil }
        state = .preparing
        return body
    }

    /// The transfer's own end does not matter (the cache answers instead): the transfer to
    /// cancel.
    mutating func abandonTransfer() -> Transfer? {
        guard case .transferring(_, let transfer, _) = state else { return nil }
        state = .preparing
        return transfer
    }

    /// The running protocol stops (its load is over, it redirected, or the connection ended):
    /// the instance to stop, if one runs.
    mutating func protocolStopped() -> Protocol? {
        guard case .loadingProtocol(_, let instance) = state else { return nil }
        state = .preparing
        return instance
    }

    /// One more redirect is to be followed: false when it is more than `maximum` (or the load
    /// ended).
    mutating func redirected(maximum: Int) -> Bool {
        guard !isEnded else { return false }
        redirects += 1
        return redirects <= maximum
    }

    // MARK: Challenges

    /// The number of the next challenge's sender: answers carry it.
    mutating func nextChallengeNumber() -> Int {
        challenges += 1
        return challenges
    }

    /// Challenge `number` waits for its answer.
    mutating func challengePresented(_ challenge: Challenge, number: Int) {
        guard case .preparing = state, number == challenges else { return }
        state = .challenged(number: number, challenge)
    }

    /// The answer to challenge `number`: the challenge it answers, or nil when it is not the
    /// one waiting (a later answer, or the load ended).
    mutating func challengeResolved(_ number: Int) -> Challenge? {
        guard case .challenged(let current, let challenge) = state, current == number else { return nil }
        state = .preparing
        return challenge
    }

    /// The connection is cancelled: the challenge waiting, to tell the delegate it is cancelled.
    mutating func challengeCancelled() -> Challenge? {
        guard case .challenged(_, let challenge) = state else { return nil }
        state = .preparing
        return challenge
    }

    // MARK: The end

    /// The load is over: false when it had ended already. A running protocol is the shell's to
    /// stop first (``protocolStopped()``).
    mutating func end(_ ending: Ending) -> Bool {
        guard !isEnded else { return false }
        state = .ended(ending)
        return true
    }
}
