import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLocks
import KeyjarResponseCache

// Talking to the delegate: messages on its queue, in order, never after the load ended.
extension LoaderConnection {
    /// Queues a message for the delegate; it is dropped if the connection is cancelled first.
    /// Without a queue of the caller's, the delegate is called right here on the control queue,
    /// which is serial too: a hop to another queue costs a thread wake-up per message, the
    /// largest part of a request's overhead over plain libcurl (docs/performance.md, Loader).
    func deliver(_ message: @escaping @Sendable (any LoaderConnectionDelegate) -> Void) {
        guard let delegate, !machine.isEnded else { return }
        guard let delegateQueue else {
            if !isCancelled { message(delegate) }
            return
        }
        delegateQueue.async {
            guard !self.isCancelled else { return }
            message(delegate)
        }
    }

    /// Asks the delegate and waits for its answer (willSend, needNewBodyStream, willCache).
    func ask<Answer: Sendable>(
        _ question: @escaping @Sendable (any LoaderConnectionDelegate) -> Answer,
        ifNoDelegate fallback: Answer
    ) -> Answer {
        guard let delegate, !machine.isEnded else { return fallback }
        guard let delegateQueue else { return isCancelled ? fallback : question(delegate) }
        return delegateQueue.sync { isCancelled ? fallback : question(delegate) }
    }

    func finish() {
        deliver { $0.connectionDidFinishLoading(self) }
        end(.finished)
    }

    func fail(_ error: URLError) {
        deliver { $0.connection(self, didFailWithError: error) }
        end(.failed)
    }

    /// The load is over: no more events are handled and the delegate is released (after the
    /// messages already queued for it).
    func end(_ ending: Machine.Ending) {
        let running = machine.protocolStopped()
        // A transfer still in flight is dropped, not cancelled: it ends by itself and its
        // events are no longer heard.
        guard machine.end(ending) else { return }
        running?.stopLoading()
        // A load that ends without offering its response to the cache stores nothing of it.
        caching.dropWriting()
        // The copy of a streamed body goes with the load, not with the last reference to it.
        bodySpool = nil
        delegate = nil
    }
}
