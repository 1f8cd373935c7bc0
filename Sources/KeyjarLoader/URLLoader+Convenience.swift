public import Foundation
public import FoundationNetworking
import KeyjarLocks
import Synchronization

extension URLLoader {
    /// Loads `request` and returns its body and final response. Redirects are followed;
    /// challenges are answered from the URL and the credential storage only. Cancelling the
    /// task cancels the load (`URLError(.cancelled)`).
    public func data(for request: URLRequest) async throws -> (Data, URLResponse) {
        let box = Locked<(connection: LoaderConnection, collector: CollectingDelegate)?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let collector = CollectingDelegate(
                    url: request.url,
                    waiter: .completion { result in continuation.resume(with: result) }
                )
                let connection = connection(with: request, delegate: collector, startImmediately: false)
                box.withLock { $0 = (connection, collector) }
                connection.start()
            }
        } onCancel: {
            guard let (connection, collector) = box.withLock({ $0 }) else { return }
            // The waiting caller is told (unlike by `cancel()` alone); after a result this does
            // nothing, a collector completes once.
            collector.cancelled()
            connection.cancel()
        }
    }

    /// NSURLConnection's `sendSynchronousRequest`: blocks the calling thread until the load
    /// ends. Redirects are always followed; challenges are answered from the URL and the
    /// credential storage only.
    public func sendSynchronousRequest(_ request: URLRequest) throws -> (Data, URLResponse) {
        let executor = CallerExecutor(makeQueue: LoaderConnection.makeControlQueue)
        // The collector keeps the result and wakes the caller itself: a closure holding two
        // boxed locks for that would be three allocations more per request.
        let collector = CollectingDelegate(url: request.url, waiter: .caller(executor))
        let connection = LoaderConnection(
            request: request,
            delegate: collector,
            loader: self,
            delegateQueue: nil,
            startImmediately: false,
            executor: executor
        )
        connection.start()
        executor.run { collector.isFinished }
        guard let result = collector.result else { throw URLError(.unknown) }
        return try result.get()
    }
}

/// Gathers a load's body for the async and synchronous calls. Touched on its connection's
/// delegate queue only, except `cancelled()` and `result`, which go through the lock.
final class CollectingDelegate: LoaderConnectionDelegate, @unchecked Sendable {
    typealias Outcome = Result<(Data, URLResponse), any Error>

    /// Who hears of the result, once.
    enum Waiter: Sendable {
        case completion(@Sendable (Outcome) -> Void)
        /// A caller blocked in `executor.run`, which reads `result` when woken.
        case caller(CallerExecutor)
    }

    private let waiter: Waiter
    private let outcome = Locked<Outcome?>(nil)
    /// The request's URL, for the errors this reports itself (not a weak reference to the
    /// connection: that is a side-table allocation per request).
    private let url: URL?
    private var response: URLResponse?
    private var data = Data()

    init(url: URL?, waiter: Waiter) {
        self.url = url
        self.waiter = waiter
    }

    /// The load's result once it ended.
    var result: Outcome? { outcome.withLock { $0 } }

    var isFinished: Bool { outcome.withLock { $0 != nil } }

    private func complete(_ result: Outcome) {
        let first = outcome.withLock { outcome in
            guard outcome == nil else { return false }
            outcome = result
            return true
        }
        guard first else { return }
        switch waiter {
        case .completion(let completion): completion(result)
        // The result normally comes from a job on the waiting thread itself (then this costs
        // no system call); from anywhere else, this wakes it.
        case .caller(let executor): executor.wake()
        }
    }

    func cancelled() {
        complete(.failure(LoaderError.make(.cancelled, "The load was cancelled", url: url)))
    }

    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {
        self.response = response
        data = Data()
    }

    func connection(_ connection: LoaderConnection, didReceive data: Data) {
        // The first piece is taken as it is (Data shares its buffer), not copied into an empty
        // buffer: no allocation and no copy for a body that comes in one piece.
        if self.data.isEmpty { self.data = data } else { self.data.append(data) }
    }

    func connectionDidFinishLoading(_ connection: LoaderConnection) {
        guard let response else {
            complete(.failure(LoaderError.make(.badServerResponse, "The load ended without a response", url: url)))
            return
        }
        complete(.success((data, response)))
    }

    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        complete(.failure(error))
    }
}
