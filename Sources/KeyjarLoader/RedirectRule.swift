public import Foundation
import FoundationNetworking
import KeyjarTransfer

/// A redirect's rule (`RedirectHop`, in KeyjarTransfer) applied to a `URLRequest`. Public for
/// the rule a client needs to follow it too: which hops are same-origin (where a request's own
/// credentials and cookies may go).
public enum RedirectRule {
    /// The request to send to `target` after `status` answered `request`: the method and body
    /// as `RedirectHop.method(after:sentWith:)` says; credentials and cookies never follow a
    /// redirect to another origin.
    static func request(following request: URLRequest, to target: URL, status: Int) -> URLRequest {
        var next = request
        next.url = target
        let hop = RedirectHop.method(after: status, sentWith: request.httpMethod ?? "GET")
        if hop.dropsBody {
            next.httpMethod = hop.method
            next.httpBody = nil
            next.httpBodyStream = nil
            for field in RedirectHop.bodyFields { next.setValue(nil, forHTTPHeaderField: field) }
        }
        if let from = request.url, !RedirectHop.sameOrigin(from, target) {
            for field in RedirectHop.originBoundFields { next.setValue(nil, forHTTPHeaderField: field) }
        }
        return next
    }

    /// Whether `a` and `b` are one origin (scheme, host and port).
    public static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        RedirectHop.sameOrigin(a, b)
    }
}
