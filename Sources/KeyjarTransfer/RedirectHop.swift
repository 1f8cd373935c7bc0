package import FoundationEssentials

/// How a redirect turns one request into the next (RFC 9110 §15.4, as browsers and Apple's
/// loader apply it), on plain values: which responses redirect, the next request's method and
/// whether its body goes, and which fields never reach another origin. The loader applies it to
/// a `URLRequest` (`RedirectRule`); a fetch without Foundation applies it to its own request.
package enum RedirectHop {
    /// The statuses that redirect, given a Location.
    package static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    /// The fields that describe a body, dropped with it.
    package static let bodyFields = ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"]

    /// The fields that carry the user's credentials and cookies: never sent on to another
    /// origin, whatever the request set.
    package static let originBoundFields = ["Authorization", "Cookie"]

    package static func isRedirect(_ head: ResponseHead) -> Bool {
        statuses.contains(head.statusCode) && head.value(of: "Location") != nil
    }

    /// The next request's method after `status` answered one sent with `method`, and whether
    /// its body (with ``bodyFields``) is dropped:
    /// - 303: GET (HEAD stays HEAD), without the body;
    /// - 301 and 302: POST becomes GET without the body; other methods are kept;
    /// - 307 and 308: method and body kept.
    package static func method(after status: Int, sentWith method: String) -> (method: String, dropsBody: Bool) {
        let method = method.uppercased()
        let becomesGet = (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST")
        return becomesGet ? ("GET", true) : (method, false)
    }

    /// Whether `a` and `b` are one origin: scheme, host and port (the scheme's default when
    /// none is given), case-insensitively.
    package static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        origin(a) == origin(b)
    }

    /// `scheme://host:port`, lower-cased, the port always given.
    package static func origin(_ url: URL) -> String {
        let scheme = url.scheme?.lowercased() ?? ""
        let port = url.port ?? (scheme == "https" ? 443 : scheme == "http" ? 80 : 0)
        return "\(scheme)://\(url.host?.lowercased() ?? ""):\(port)"
    }
}
