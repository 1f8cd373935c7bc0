import Foundation
import FoundationNetworking

/// The download's side of its connection: every message goes to the download, which checks
/// that it comes from its current connection (a restart replaces it).
final class DownloadConnectionDelegate: LoaderConnectionAuthenticationDelegate, @unchecked Sendable {
    /// Held until the connection ends and lets its delegate go: a download in flight keeps
    /// itself alive, as a connection does.
    let download: LoaderDownload
    /// The download's delegate when the connection was made: `cancel()` lets the download
    /// forget it, but a challenge it held on this connection is still cancelled to it.
    let delegate: (any LoaderDownloadDelegate)?

    init(download: LoaderDownload, delegate: (any LoaderDownloadDelegate)?) {
        self.download = download
        self.delegate = delegate
    }

    func connection(
        _ connection: LoaderConnection,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        download.willSend(request, redirectResponse: redirectResponse)
    }

    func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {
        download.received(response, on: connection)
    }

    func connection(_ connection: LoaderConnection, didReceive data: Data) {
        download.received(data, on: connection)
    }

    func connectionDidFinishLoading(_ connection: LoaderConnection) {
        download.finished(connection)
    }

    func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        download.failed(error, on: connection)
    }

    /// A download's bytes go to its file, not into the response cache as well.
    func connection(
        _ connection: LoaderConnection,
        willCacheResponse cachedResponse: CachedURLResponse
    ) -> CachedURLResponse? {
        nil
    }

    func connection(_ connection: LoaderConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
        download.challenge(challenge)
    }

    func connection(_ connection: LoaderConnection, didCancel challenge: URLAuthenticationChallenge) {
        download.challengeCancelled(challenge, on: connection, delegate: delegate)
    }
}
