import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLocks
import KeyjarTransfer

// Redirects, libcurl's and registered protocols': the loader's limit and the delegate decide
// each hop; cookies and credentials follow the rules.
extension LoaderConnection {
    func followRedirect(_ head: ResponseHead, response: HTTPURLResponse, body: Data) {
        let current = currentRequest
        guard let from = current.url, let location = head.value(of: "Location"),
            let target = URL(string: location, relativeTo: from)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else {
            // Not a redirect we can follow (no or bad Location, another scheme): the 3xx is the answer.
            deliverFinal(response, body: body)
            return
        }
        // A redirect answers the request: any credential sent got past authentication.
        authenticationSucceeded()
        let proposed = RedirectRule.request(following: current, to: target, status: head.statusCode)
        let next: URLRequest
        switch nextHop(
            proposed,
            after: response,
            tooMany: "redirects, the last to \(Self.urlWithoutPassword(target).absoluteString)"
        ) {
        case .success(let request): next = request
        case .failure(.refused): return deliverFinal(response, body: body)
        case .failure(.tooMany): return
        }
        setCurrentRequest(next)
        authentication.redirected()
        // The redirect's target may be cached too.
        if protocolClass(for: next) == nil, consultCache(for: next) { return }
        startAttempt()
    }

    /// A registered protocol's redirect: the same limit and the same say for the delegate.
    func followProtocolRedirect(to proposed: URLRequest, response: URLResponse) {
        switch nextHop(proposed, after: response, tooMany: "redirects") {
        case .success(let next):
            setCurrentRequest(next)
            startAttempt()
        case .failure(.refused):
            channel.deliver { $0.connection(self, didReceive: response) }
            finish()
        case .failure(.tooMany):
            return
        }
    }

    /// Why a redirect is not followed.
    enum HopRefusal: Error {
        /// More hops than the loader allows: the load has failed.
        case tooMany
        /// The delegate's `willSend` returned nil: the redirect response is the answer.
        case refused
    }

    /// The request of one more hop, if the loader's limit allows it (else the load fails) and
    /// the delegate agrees (`willSend`, which may change it).
    private func nextHop(
        _ proposed: URLRequest,
        after response: URLResponse,
        tooMany: String
    ) -> Result<URLRequest, HopRefusal> {
        let maximum = loader.configuration.maximumRedirects
        guard machine.redirected(maximum: maximum) else {
            fail(LoaderError.make(.httpTooManyRedirects, "More than \(maximum) \(tooMany)", url: currentRequest.url))
            return .failure(.tooMany)
        }
        let next = channel.ask(
            { $0.connection(self, willSend: proposed, redirectResponse: response) },
            ifNoDelegate: proposed
        )
        return next.map { .success($0) } ?? .failure(.refused)
    }
}
