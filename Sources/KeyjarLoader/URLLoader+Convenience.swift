public import Foundation
public import FoundationNetworking
import Synchronization

extension URLLoader {
    /// Loads `request` and returns its body and final response. Redirects are followed;
    /// challenges are answered from the URL and the credential storage only. Cancelling the
    /// task cancels the load (`URLError(.cancelled)`).
    public func data(for request: URLRequest) async throws -> (Data, URLResponse) {
        let box = Mutex<(connection: LoaderConnection, collector: CollectingDelegate)?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let collector = CollectingDelegate(url: request.url) { result in continuation.resume(with: result) }
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
        let outcome = Mutex<Result<(Data, URLResponse), any Error>?>(nil)
        let executorBox = Mutex<CallerExecutor?>(nil)
        let collector = CollectingDelegate(url: request.url) { result in
            outcome.withLock { $0 = result }
            // The result normally comes from a job on the waiting thread itself (then this
            // costs no system call); from anywhere else, this wakes it.
            executorBox.withLock { $0 }?.wake()
        }
        let connection = LoaderConnection(
            request: request, delegate: collector, loader: self, delegateQueue: nil, startImmediately: false, runsOnCaller: true)
        guard let executor = connection.executor else { throw URLError(.unknown) }
        executorBox.withLock { $0 = executor }
        connection.start()
        executor.run { outcome.withLock { $0 != nil } }
        guard let result = outcome.withLock({ $0 }) else { throw URLError(.unknown) }
        return try result.get()
    }
}

/// Gathers a load's body for the async and synchronous calls. Touched on its connection's
/// delegate queue only, except `cancelled()`, which is idempotent through the lock.
final class CollectingDelegate: LoaderConnectionDelegate, @unchecked Sendable {
    private let completion: @Sendable (Result<(Data, URLResponse), any Error>) -> Void
    private let completed = Mutex(false)
    /// The request's URL, for the errors this reports itself (a weak reference to the
    /// connection cost a side-table allocation per request).
    private let url: URL?
    private var response: URLResponse?
    private var data = Data()

    init(url: URL?, completion: @escaping @Sendable (Result<(Data, URLResponse), any Error>) -> Void) {
        self.url = url
        self.completion = completion
    }

    private func complete(_ result: Result<(Data, URLResponse), any Error>) {
        guard completed.withLock({ done in defer { done = true }; return !done }) else { return }
        completion(result)
    }

    func cancelled() {
        complete(.failure(LoaderError.make(.cancelled, "The load was cancelled", url: url)))
    }

    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {
        self.response = response
        data = Data()
    }

    func connection(_ connection: LoaderConnection, didReceive data: Data) {
        // The first piece is taken as it is (Data shares its buffer): a copy into an empty
        // buffer was an allocation and a copy of the bytes per request.
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
