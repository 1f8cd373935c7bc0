import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarLocks

// Redirects: the delegate decides each hop; cookies and credentials follow the rules.
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
        guard machine.redirected(maximum: loader.configuration.maximumRedirects) else {
            fail(
                LoaderError.make(
                    .httpTooManyRedirects,
                    "More than \(loader.configuration.maximumRedirects) redirects, the last to \(Self.urlWithoutPassword(target).absoluteString)",
                    url: from
                )
            )
            return
        }
        let proposed = RedirectRule.request(following: current, to: target, status: head.statusCode)
        guard
            let next = channel.ask(
                { $0.connection(self, willSend: proposed, redirectResponse: response) },
                ifNoDelegate: proposed
            )
        else {
            deliverFinal(response, body: body)
            return
        }
        setCurrentRequest(next)
        authentication.redirected()
        // The redirect's target may be cached too.
        if protocolClass(for: next) == nil, consultCache(for: next) { return }
        startAttempt()
    }
}
