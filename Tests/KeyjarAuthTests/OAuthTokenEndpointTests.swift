import Foundation
import KeyjarAuth
import KeyjarTestSupport
import Testing

/// The refresh request (RFC 6749 §6) and the token endpoint's answers (§5.1, §5.2).
struct OAuthTokenEndpointTests {
    static let refreshToken = "tGzv3JOkF0XG5Qx2TlKWIA"

    /// The body as Python's form decoder reads it: an independent reader of the encoding,
    /// tried with characters that must be escaped.
    @Test func refreshBodyDecodesToTheFields() async throws {
        let request = try OAuthRefreshRequest(refreshToken: "a+b/c=d&e f%~", clientID: "cli ent&1")
        #expect(request.contentType == "application/x-www-form-urlencoded")
        let decoded = try await Python.run(
            "import sys, urllib.parse, json; print(json.dumps(urllib.parse.parse_qs(sys.stdin.read(), strict_parsing=True), sort_keys=True))",
            input: String(decoding: request.body, as: UTF8.self)
        )
        #expect(
            decoded
                == #"{"client_id": ["cli ent&1"], "grant_type": ["refresh_token"], "refresh_token": ["a+b/c=d&e f%~"]}"#
                + "\n"
        )
        // §6's example, without a client id: the fields in the order it shows them.
        let plain = try OAuthRefreshRequest(refreshToken: Self.refreshToken)
        #expect(
            String(decoding: plain.body, as: UTF8.self) == "grant_type=refresh_token&refresh_token=\(Self.refreshToken)"
        )
    }

    @Test func refusesRequestsOAuthCannotCarry() {
        #expect(throws: OAuthTokenError.self) { try OAuthRefreshRequest(refreshToken: "") }
        #expect(throws: OAuthTokenError.self) { try OAuthRefreshRequest(refreshToken: "a\nb") }
        #expect(throws: OAuthTokenError.self) { try OAuthRefreshRequest(refreshToken: "a", clientID: "x\u{7F}") }
        #expect(throws: OAuthTokenError.self) { try OAuthRefreshRequest(refreshToken: "a", clientID: "") }
    }

    /// §5.1's example; the token type in any case; a rotated refresh token; the expiry.
    @Test func readsTheTokenResponse() throws {
        let request = try OAuthRefreshRequest(refreshToken: Self.refreshToken)
        let body = Data(
            #"{"access_token":"2YotnFZFEjr1zCsicMWpAA","token_type":"BEARER","expires_in":3600,"refresh_token":"tGzv3JOkF0XG5Qx2TlKWIB","example_parameter":"example_value"}"#
                .utf8
        )
        let answer = try request.response(status: 200, body: body)
        #expect(answer.accessToken == "2YotnFZFEjr1zCsicMWpAA")
        #expect(answer.tokenType == "BEARER")
        #expect(answer.expiresIn == 3600)
        #expect(answer.expires(from: 1_000) == 4_600)
        #expect(answer.refreshToken == "tGzv3JOkF0XG5Qx2TlKWIB")
        #expect(!answer.description.contains("2YotnFZFEjr1zCsicMWpAA") && !answer.description.contains("KWIB"))
        #expect(!dumped(answer).contains("2Yotn") && !dumped(answer).contains("KWIB"))
        #expect(!dumped(request).contains(Self.refreshToken) && !request.description.contains(Self.refreshToken))

        // No rotation and no expiry: both nil. expires_in as a string, as some servers send it.
        let bare = try request.response(status: 200, body: Data(#"{"access_token":"x1","token_type":"bearer"}"#.utf8))
        #expect(bare.refreshToken == nil && bare.expiresIn == nil)
        let stringly = try request.response(
            status: 200,
            body: Data(#"{"access_token":"x1","token_type":"Bearer","expires_in":"60"}"#.utf8)
        )
        #expect(stringly.expiresIn == 60)
    }

    @Test func unusableAnswersAreTypedErrors() throws {
        let request = try OAuthRefreshRequest(refreshToken: Self.refreshToken)
        func error(_ status: Int, _ json: String) -> OAuthTokenError? {
            do {
                _ = try request.response(status: status, body: Data(json.utf8))
                return nil
            } catch { return error }
        }
        #expect(error(200, "not json") == .malformedResponse("the body is not a JSON object of the token response"))
        #expect(error(200, #"{"token_type":"Bearer"}"#) == .malformedResponse("the response has no access_token"))
        #expect(error(200, #"{"access_token":"x"}"#) == .malformedResponse("the response has no token_type"))
        #expect(error(200, #"{"access_token":"x","token_type":"mac"}"#) == .unsupportedTokenType("mac"))
        #expect(
            error(200, #"{"access_token":"a b","token_type":"Bearer"}"#)
                == .malformedResponse("the access_token has characters a Bearer header cannot carry")
        )
        #expect(
            error(200, #"{"access_token":"a\r\nX-Injected: 1","token_type":"Bearer"}"#)
                == .malformedResponse("the access_token has characters a Bearer header cannot carry")
        )
        if case .malformedResponse = error(200, #"{"access_token":"x","token_type":"Bearer","expires_in":-5}"#) {
        } else {
            Issue.record("a negative expires_in was accepted")
        }
        #expect(error(502, "<html>bad gateway</html>") == .unexpectedStatus(502))
    }

    /// §5.2: invalid_grant is the dead refresh token; the description is shown when plain, and
    /// never when it would show a token.
    @Test func refusalsAreReadAndNeverShowATokenSent() throws {
        let request = try OAuthRefreshRequest(refreshToken: Self.refreshToken, clientID: "cli")
        do {
            _ = try request.response(
                status: 400,
                body: Data(#"{"error":"invalid_grant","error_description":"The refresh token was used already"}"#.utf8)
            )
            Issue.record("invalid_grant was accepted")
        } catch {
            #expect(error.isInvalidGrant)
            #expect(
                error.description
                    == "the token endpoint refused the refresh (invalid_grant, HTTP 400): The refresh token was used already"
            )
        }
        do {
            _ = try request.response(
                status: 400,
                body: Data(
                    #"{"error":"invalid_grant","error_description":"token \#(Self.refreshToken) is revoked"}"#.utf8
                )
            )
            Issue.record("invalid_grant was accepted")
        } catch {
            #expect(error.isInvalidGrant)
            #expect(!error.description.contains(Self.refreshToken))
            #expect(error == .refused(.invalidGrant, description: nil, status: 400))
        }
        // An unknown code made of the token is not shown either; invalid_client is not invalid_grant.
        #expect(
            throws: OAuthTokenError.refused(OAuthErrorCode(rawValue: "unreadable_error"), description: nil, status: 400)
        ) {
            try request.response(status: 400, body: Data(#"{"error":"\#(Self.refreshToken)"}"#.utf8))
        }
        do {
            _ = try request.response(status: 401, body: Data(#"{"error":"invalid_client"}"#.utf8))
        } catch {
            #expect(!error.isInvalidGrant && error == .refused(.invalidClient, description: nil, status: 401))
        }
        // A 200 that carries an error is a refusal.
        #expect(throws: OAuthTokenError.refused(.invalidGrant, description: nil, status: 200)) {
            try request.response(status: 200, body: Data(#"{"error":"invalid_grant","access_token":"x"}"#.utf8))
        }
    }

    /// RFC 6750 §3's challenges, read through the challenge parser.
    @Test func bearerChallengesAreRead() throws {
        let parsed = ChallengeParser.parse([
            #"Bearer realm="example""#,
            #"Bearer realm="example", error="invalid_token", error_description="The access token expired""#,
            #"Bearer realm="example", error="insufficient_scope", scope="repo read:org""#,
            #"bearer error=invalid_request"#,
            #"Bearer error="temporarily_unavailable""#,
            #"Basic realm="example""#,
        ]).challenges
        let bearer = parsed.map(BearerChallenge.init)
        #expect(bearer[0] == BearerChallenge(parsed[0]))
        #expect(bearer[0]?.realm == "example" && bearer[0]?.error == nil && bearer[0]?.rejectsToken == false)
        #expect(bearer[0]?.isFinal == false)
        #expect(bearer[1]?.error == .invalidToken && bearer[1]?.rejectsToken == true && bearer[1]?.isFinal == false)
        #expect(bearer[1]?.errorDescription == "The access token expired")
        #expect(
            bearer[2]?.error == .insufficientScope && bearer[2]?.scope == "repo read:org" && bearer[2]?.isFinal == true
        )
        #expect(bearer[3]?.error == .invalidRequest && bearer[3]?.isFinal == true && bearer[3]?.realm == nil)
        #expect(bearer[4]?.error == .other("temporarily_unavailable") && bearer[4]?.rejectsToken == false)
        #expect(bearer[5] == nil)
    }
}

/// Mutated token endpoint answers: read or refused, never a crash, and never a token (the one
/// sent, or one in the body) in an error or a description. The `oauth-token` fuzz target
/// checks the same without end.
struct OAuthTokenEndpointFuzzTests {
    static let sent = "Rt-7q2Ks9sent"
    static let seeds = [
        #"{"access_token":"2YotnFZFEjr1zCsicMWpAA","token_type":"Bearer","expires_in":3600,"refresh_token":"tGzv3JOkF0XG5Qx2TlKWIA"}"#,
        #"{"error":"invalid_grant","error_description":"token Rt-7q2Ks9sent was used"}"#,
        #"{"error":"Rt-7q2Ks9sent","error_description":"2YotnFZFEjr1zCsicMWpAA","access_token":"2YotnFZFEjr1zCsicMWpAA"}"#,
        #"{"access_token":"tok-abcdef","token_type":"tok-abcdef","expires_in":"60"}"#,
        #"{"error":"invalid_request","refresh_token":"refresh-xyz1","error_description":"refresh-xyz1 bad"}"#,
    ]

    @Test(arguments: 0..<4)
    func noTokenEverReachesAnError(seed: UInt64) throws {
        var random = SplitMix64(state: seed)
        let request = try OAuthRefreshRequest(refreshToken: Self.sent)
        for _ in 0..<2_000 {
            let text = Mutation.mutate(Self.seeds.randomElement(using: &random) ?? "", using: &random)
            let status = [200, 400, 401, 500].randomElement(using: &random) ?? 200
            let body = Data(text.utf8)
            let object = (try? JSONSerialization.jsonObject(with: body)) as? [String: Any]
            // Tokens that cannot be a piece of the fixed wording (which has digits only in
            // "HTTP 400", after a space): 8 characters or more, a digit, no space.
            let tokens = ([Self.sent] + ["access_token", "refresh_token"].compactMap { object?[$0] as? String })
                .filter { $0.count >= 8 && !$0.contains(" ") && $0.contains(where: \.isNumber) }
            do {
                let answer = try request.response(status: status, body: body)
                #expect(answer.accessToken.utf8.allSatisfy { (0x21...0x7E).contains($0) })
                // By difference: other tokens, the same description.
                let other = OAuthTokenResponse(
                    accessToken: "other",
                    tokenType: answer.tokenType,
                    expiresIn: answer.expiresIn,
                    refreshToken: answer.refreshToken.map { _ in "other" },
                    scope: answer.scope
                )
                #expect(answer.description == other.description)
            } catch {
                for token in tokens { #expect(!error.description.contains(token), "\(text)") }
            }
        }
    }
}
