package import Keyjar
package import KeyjarProtocol

/// The protocol client the server tests use (the wire format itself, not the client library).
package typealias TestClient = WireConnection

extension WireConnection {
    /// Sets cookies as a response from `url` would, returning each line's outcome.
    @discardableResult
    package func setCookies(_ headers: [String], from url: String, mainDocument: String? = nil) throws -> [String?] {
        let response = try call(
            .setCookies(headers: headers, context: WireCookieContext(url: url, mainDocumentURL: mainDocument))
        )
        guard case .cookieOutcomes(let outcomes, _) = response else { throw ConnectionError("unexpected \(response)") }
        return outcomes
    }

    package func cookieHeader(for url: String) throws -> String? {
        let response = try call(.cookieHeader(context: WireCookieContext(url: url)))
        guard case .cookieHeader(let header) = response else { throw ConnectionError("unexpected \(response)") }
        return header
    }

    package func snapshot() throws -> StoreSnapshot {
        let response = try call(.snapshot)
        guard case .snapshot(let snapshot) = response else { throw ConnectionError("unexpected \(response)") }
        return snapshot
    }
}
