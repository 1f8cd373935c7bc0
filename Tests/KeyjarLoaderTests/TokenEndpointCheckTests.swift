import Foundation
import KeyjarAuth
import KeyjarCore
import Testing

@testable import KeyjarLoader

/// The loader's own check before it posts a refresh token, behind keyjard's (which refuses such
/// an endpoint first, so no load reaches this one): the same rule, and nothing is sent.
struct TokenEndpointCheckTests {
    @Test func aRefreshTokenIsNeverPostedInClearToAnotherHost() {
        // Port 9 on 127.0.0.1 answers nothing: a post that was tried would fail as unreachable.
        for endpoint in ["http://127.attacker.example:9/token", "http://login.invalid/token"] {
            let result = TokenRefresher.requestNewToken(
                refreshToken: "refresh-secret",
                refresh: TokenRefresh(endpoint: endpoint),
                endpoint: .init(proxy: nil, trustAnchors: .system)
            )
            guard case .failure(.malformedRequest(let reason)) = result else {
                Issue.record("\(endpoint): \(result)")
                continue
            }
            #expect(reason.contains("not this machine") && !reason.contains("refresh-secret"), "\(reason)")
        }
        let local = TokenRefresher.requestNewToken(
            refreshToken: "r",
            refresh: TokenRefresh(endpoint: "http://127.0.0.1:9/token"),
            endpoint: .init(proxy: nil, trustAnchors: .system)
        )
        guard case .failure(.unreachable) = local else {
            Issue.record("an endpoint on this machine was not tried: \(local)")
            return
        }
    }
}
