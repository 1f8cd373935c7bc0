import Foundation
import FoundationNetworking

// Registered protocols: which one loads a request, and what its client reports.
extension LoaderConnection {
    func protocolClass(for request: URLRequest) -> LoaderProtocol.Type? {
        loader.protocolClass(for: request)
    }

    /// Runs this attempt through a registered protocol.
    func startProtocol(_ protocolClass: LoaderProtocol.Type, request: URLRequest) {
        guard let attempt = machine.nextAttempt() else { return }
        let client = ProtocolClientBridge(connection: self, attempt: attempt)
        let instance = protocolClass.init(
            request: request,
            cachedResponse: cachedResponse(forProtocol: request),
            client: client
        )
        machine.protocolStarted(instance, attempt: attempt)
        instance.startLoading()
    }

    /// Stops the protocol of the current attempt, if one runs.
    func stopProtocol() {
        machine.protocolStopped()?.stopLoading()
    }

    func handleProtocol(_ event: ProtocolEvent, attempt number: Int) {
        guard machine.isProtocolCurrent(attempt: number) else { return }
        switch event {
        case .response(let response, let policy):
            startCachingProtocolResponse(response, policy: policy)
            channel.deliver { $0.connection(self, didReceive: response) }
        case .data(let data):
            caching.append(data)
            channel.deliver { $0.connection(self, didReceive: data) }
        case .finished:
            // As URLProtocol's are, a protocol is stopped once its load is over, too.
            stopProtocol()
            offerToCache()
            finish()
        case .failed(let error):
            stopProtocol()
            let url = currentRequest.url
            fail(
                error as? URLError
                    ?? LoaderError.make(
                        .unknown,
                        "Loading failed: \(error.localizedDescription)",
                        url: url,
                        underlying: error
                    )
            )
        case .redirected(let request, let response):
            stopProtocol()
            caching.dropWriting()
            followProtocolRedirect(to: request, response: response)
        case .challenge(let challenge):
            presentProtocolChallenge(challenge)
        case .challengeCancelled(let challenge):
            deliverCancellation(of: challenge)
        }
    }

    /// A protocol's challenge goes to the delegate as a connection's would; its sender is the
    /// protocol's own.
    private func presentProtocolChallenge(_ challenge: URLAuthenticationChallenge) {
        if !channel.present(challenge, to: self) { challenge.sender?.performDefaultHandling(for: challenge) }
    }
}

/// What a registered protocol reported, carried onto the connection's serial work.
enum ProtocolEvent: @unchecked Sendable {
    case response(URLResponse, URLCache.StoragePolicy)
    case data(Data)
    case finished
    case failed(any Error)
    case redirected(URLRequest, URLResponse)
    case challenge(URLAuthenticationChallenge)
    case challengeCancelled(URLAuthenticationChallenge)
}

/// The client a registered protocol reports to: each call becomes an event of the attempt
/// it was made for; a protocol the connection has left is not heard.
final class ProtocolClientBridge: LoaderProtocolClient, @unchecked Sendable {
    private let connection: LoaderConnection
    private let attempt: Int

    init(connection: LoaderConnection, attempt: Int) {
        self.connection = connection
        self.attempt = attempt
    }

    private func post(_ event: ProtocolEvent) {
        let connection = connection
        let attempt = attempt
        connection.schedule { connection.handleProtocol(event, attempt: attempt) }
    }

    func urlProtocol(_ protocol: LoaderProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse) {
        post(.redirected(request, redirectResponse))
    }

    func urlProtocol(
        _ protocol: LoaderProtocol,
        didReceive response: URLResponse,
        cacheStoragePolicy policy: URLCache.StoragePolicy
    ) {
        post(.response(response, policy))
    }

    func urlProtocol(_ protocol: LoaderProtocol, didLoad data: Data) { post(.data(data)) }
    func urlProtocolDidFinishLoading(_ protocol: LoaderProtocol) { post(.finished) }
    func urlProtocol(_ protocol: LoaderProtocol, didFailWithError error: any Error) { post(.failed(error)) }
    func urlProtocol(_ protocol: LoaderProtocol, didReceive challenge: URLAuthenticationChallenge) {
        post(.challenge(challenge))
    }
    func urlProtocol(_ protocol: LoaderProtocol, didCancel challenge: URLAuthenticationChallenge) {
        post(.challengeCancelled(challenge))
    }
}
