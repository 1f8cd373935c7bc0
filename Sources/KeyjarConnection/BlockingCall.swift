import Dispatch

/// Runs a call that may block (connecting, which may start keyjard and wait up to
/// `KEYJAR_START_TIMEOUT`; a round trip to keyjard; the Secret Service, which may prompt) on
/// ``blockingCalls`` and suspends the caller until it returns, so that no thread of Swift's
/// cooperative pool, of which there are as many as cores, waits on a socket meanwhile.
/// The call itself cannot be interrupted: cancelling the awaiting task does not end it.
package func awaitBlockingCall<T: Sendable, Failure: Error>(
    _ body: @escaping @Sendable () throws(Failure) -> T
) async throws(Failure) -> T {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
        blockingCalls.async {
            continuation.resume(returning: Result { () throws(Failure) -> T in try body() })
        }
    }
    return try result.get()
}

/// Where blocking calls wait. A queue of its own rather than a global one: libdispatch on Linux
/// gives the global queues as many threads as cores and does not see them block, whereas a
/// created queue is served by the overcommitting pool, which adds a thread when all are busy.
let blockingCalls = DispatchQueue(label: "org.keyjar.blocking-calls", attributes: .concurrent)
