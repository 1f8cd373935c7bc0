import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCommands
import KeyjarLoader

/// Cookies given with `-H 'Cookie: …'`, sent together with the shared store's, as curl sends
/// `-b` cookies beside its jar's: the given pairs first, then each stored cookie whose name
/// they do not already use. Like curl's own custom headers, they go only to the origin of the
/// URL given (a redirect elsewhere gets the stored cookies alone).
///
/// The loader sends no stored cookies for a request that sets its own Cookie field (as
/// Foundation's loading does), so the merged field is set on every request of the load:
/// the first here, each redirect's in the delegate's `willSend`.
struct UserCookies: Sendable {
    /// The value of the Cookie field(s) given, joined with "; ".
    let pairs: String
    let origin: URL
    /// nil with --no-cookies: the given pairs are sent alone.
    let client: KeyjarClient?

    /// Takes the Cookie fields out of `-H`'s list; nil when there are none.
    static func take(
        from headers: inout [(name: String, value: String)],
        origin: URL,
        client: KeyjarClient?
    )
        -> UserCookies?
    {
        let given = headers.filter { $0.name.caseInsensitiveCompare("Cookie") == .orderedSame }.map(\.value)
        guard !given.isEmpty else { return nil }
        headers.removeAll { $0.name.caseInsensitiveCompare("Cookie") == .orderedSame }
        return UserCookies(pairs: given.joined(separator: "; "), origin: origin, client: client)
    }

    /// The request with its Cookie field as it must go out.
    func apply(to request: URLRequest) -> URLRequest {
        var request = request
        guard let url = request.url else { return request }
        var parts: [String] = []
        if RedirectRule.sameOrigin(url, origin) { parts.append(pairs) }
        if request.httpShouldHandleCookies, let client,
            let stored = try? client.cookieHeader(for: url, httpMethod: request.httpMethod ?? "GET")
        {
            let given = Set(parts.flatMap(Self.names))
            let kept = stored.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !given.contains(Self.name(of: $0)) }
            parts += kept
        }
        request.setValue(parts.isEmpty ? nil : parts.joined(separator: "; "), forHTTPHeaderField: "Cookie")
        return request
    }

    private static func names(_ header: String) -> [String] {
        header.split(separator: ";").map { name(of: $0.trimmingCharacters(in: .whitespaces)) }
    }

    private static func name(of pair: String) -> String {
        String(pair.prefix { $0 != "=" }).trimmingCharacters(in: .whitespaces)
    }
}
