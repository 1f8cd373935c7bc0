public import Foundation
import FoundationNetworking
import KeyjarTransfer

/// How a redirect turns one request into the next (RFC 9110 §15.4, as browsers and Apple's
/// loader apply it). Public for the rule a client needs to follow it too: which hops are
/// same-origin (where a request's own credentials and cookies may go).
public enum RedirectRule {
    static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    static func isRedirect(_ head: ResponseHead) -> Bool {
        statuses.contains(head.statusCode) && head.value(of: "Location") != nil
    }

    /// The request to send to `target` after `status` answered `request`.
    /// - 303: GET (HEAD stays HEAD), without the body.
    /// - 301 and 302: POST becomes GET without the body; other methods are kept.
    /// - 307 and 308: method and body kept.
    /// Credentials never follow a redirect to another origin.
    static func request(following request: URLRequest, to target: URL, status: Int) -> URLRequest {
        var next = request
        next.url = target
        let method = (request.httpMethod ?? "GET").uppercased()
        let becomesGet = (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST")
        if becomesGet {
            next.httpMethod = "GET"
            next.httpBody = nil
            next.httpBodyStream = nil
            for field in ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"] {
                next.setValue(nil, forHTTPHeaderField: field)
            }
        }
        if let from = request.url, !sameOrigin(from, target) {
            next.setValue(nil, forHTTPHeaderField: "Authorization")
            next.setValue(nil, forHTTPHeaderField: "Cookie")
        }
        return next
    }

    public static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        origin(a) == origin(b)
    }

    static func origin(_ url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
