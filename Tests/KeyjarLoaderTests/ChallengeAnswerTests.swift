import Foundation
import FoundationNetworking
import KeyjarAuth
import KeyjarCore
import KeyjarDigest
import KeyjarLocks
import Testing

@testable import KeyjarLoader
@testable import KeyjarTransfer

/// What answers a 401 or 407, without a server: the order of the sources, each tried once per
/// space and load, a refused credential proposed next, and the token and Digest rules.
@Suite("Challenge answer")
struct ChallengeAnswerTests {
    static let space = ProtectionSpace(host: "example.com", protocol: "https", realm: "r")
    static let stored = URLCredential(user: "stored", password: "s", persistence: .permanent)
    static let proposed = URLCredential(user: "proposed", password: "p", persistence: .permanent)
    static let token = CredentialRecord(
        space: ProtectionSpace(host: "example.com", protocol: "https", authenticationMethod: .httpBearer),
        user: "token",
        persistence: .permanent,
        isDefault: true,
        created: 0,
        hasRefreshToken: true
    )

    /// A 401 (or 407) offering `challenges`, as the connection makes it.
    static func context(_ challenges: String..., target: AuthorizationTarget = .server) throws -> HTTPChallengeContext {
        let url = URL(string: "https://example.com/")!
        let status = target == .proxy ? 407 : 401
        let response = try #require(
            HTTPURLResponse(url: url, statusCode: status, httpVersion: nil, headerFields: nil)
        )
        let candidates = ChallengeSelector.candidates(
            in: ChallengeParser.parse(challenges).challenges,
            supported: [.basic, .digest, .bearer]
        )
        return HTTPChallengeContext(
            head: ResponseHead(statusCode: status, httpVersion: "HTTP/1.1", fields: []),
            response: response,
            body: Data(),
            target: target,
            candidates: candidates,
            index: 0
        )
    }

    /// Sources that record what was asked of them.
    final class Lookups: @unchecked Sendable {
        // @unchecked: the only stored state is the lock; the rest is immutable.
        let asked = Locked<[String]>([])
        let url: (user: String, password: String)?
        let stored: URLCredential?
        let token: CredentialRecord?

        init(url: (String, String)? = nil, stored: URLCredential? = nil, token: CredentialRecord? = nil) {
            self.url = url.map { (user: $0.0, password: $0.1) }
            self.stored = stored
            self.token = token
        }

        var sources: ChallengeAnswer.Sources {
            ChallengeAnswer.Sources(
                urlCredential: url,
                stored: {
                    self.asked.withLock { $0.append("stored") }
                    return self.stored
                },
                refreshableToken: { user in
                    self.asked.withLock { $0.append("token of \(user ?? "anyone")") }
                    return self.token
                },
                proposedStored: {
                    self.asked.withLock { $0.append("proposed") }
                    return ChallengeAnswerTests.proposed
                },
                forgetPreemptive: { space in self.asked.withLock { $0.append("forget \(space.host)") } }
            )
        }
    }

    /// A short name for an answer, for comparing tables.
    static func name(_ answer: ChallengeAnswer) -> String {
        switch answer {
        case .resend(let inUse): "resend \(inUse.credential.user ?? "")"
        case .refreshToken(let record, let rejected): "refresh \(record.user) rejecting \(rejected ?? "nothing")"
        case .use(let credential, let source): "use \(credential.user ?? "") from \(source)"
        case .askDelegate(let proposed, let failures): "ask proposing \(proposed?.user ?? "nothing") after \(failures)"
        }
    }

    /// Refused in turn: the URL's credential, then the stored one, then the delegate, proposed
    /// the last that failed; no source is asked before its turn.
    @Test func eachSourceInItsTurnAndOnce() throws {
        var state = AuthenticationState()
        let lookups = Lookups(url: ("url-user", "u"), stored: Self.stored)
        let context = try Self.context(#"Basic realm="r""#)
        var answers: [String] = []
        for _ in 0..<3 {
            let answer = state.answer(context, in: Self.space, from: lookups.sources)
            answers.append(Self.name(answer))
            if case .use(let credential, let source) = answer {
                state.use(
                    .init(space: Self.space, credential: credential, source: source, scheme: .basic, basicHeader: nil),
                    for: .server
                )
            }
        }
        #expect(
            answers == ["use url-user from url", "use stored from storage", "ask proposing stored after 2"]
        )
        #expect(lookups.asked.withLock { $0 } == ["stored"])
    }

    /// Nothing failed yet and nothing stored: the delegate is proposed the storage's best.
    @Test func withNothingToTryTheDelegateIsProposedTheStoragesBest() throws {
        var state = AuthenticationState()
        let lookups = Lookups()
        let answer = state.answer(try Self.context(#"Basic realm="r""#), in: Self.space, from: lookups.sources)
        #expect(Self.name(answer) == "ask proposing proposed after 0")
        #expect(lookups.asked.withLock { $0 } == ["stored", "proposed"])
    }

    /// A URL's password goes to the server only, and never answers a token challenge.
    @Test(arguments: [(#"Bearer realm="r""#, AuthorizationTarget.server), (#"Basic realm="r""#, .proxy)])
    func theURLsPasswordIsNotAToken(challenge: String, target: AuthorizationTarget) throws {
        var state = AuthenticationState()
        let lookups = Lookups(url: ("url-user", "u"), stored: Self.stored)
        let answer = state.answer(try Self.context(challenge, target: target), in: Self.space, from: lookups.sources)
        #expect(Self.name(answer) == "use stored from storage")
    }

    /// A token challenge with no token offered (the stored one expired as far as this process
    /// knows): the token Keyjar can refresh is refreshed, once per space.
    @Test func anExpiredTokenIsRefreshedOnce() throws {
        var state = AuthenticationState()
        let lookups = Lookups(token: Self.token)
        let context = try Self.context(#"Bearer realm="r""#)
        #expect(
            Self.name(state.answer(context, in: Self.space, from: lookups.sources)) == "refresh token rejecting nothing"
        )
        state.refreshStarted(space: Self.space, user: "token", context: context)
        #expect(
            Self.name(state.answer(context, in: Self.space, from: lookups.sources)) == "ask proposing proposed after 0"
        )
    }

    /// A stored token the server refused is refreshed once, naming the refused one; a
    /// delegate's refused token lets the stored one be refreshed (if it expired); nothing is
    /// refreshed when the server says no token will do (insufficient_scope or invalid_request
    /// in a 401 is final). A refused pre-emptive credential is forgotten by the loader.
    @Test(arguments: [
        (
            #"Bearer realm="r", error="invalid_token""#, AuthenticationState.Source.storage,
            "refresh token rejecting t-old"
        ),
        (#"Bearer realm="r""#, .preemptive, "refresh token rejecting t-old"),
        (#"Bearer realm="r", error="insufficient_scope""#, .storage, "ask proposing token after 1"),
        (#"Bearer error="invalid_request""#, .preemptive, "ask proposing token after 1"),
        (#"Bearer realm="r", error="invalid_token""#, .delegate, "refresh token rejecting nothing"),
    ])
    func aRefusedStoredTokenIsRefreshedOnce(
        challenge: String,
        source: AuthenticationState.Source,
        expected: String
    )
        throws
    {
        var state = AuthenticationState()
        let refused = URLCredential(user: "token", password: "t-old", persistence: .permanent)
        state.use(
            .init(space: Self.space, credential: refused, source: source, scheme: .bearer, basicHeader: nil),
            for: .server
        )
        state.triedStoredCredential(in: Self.space)
        let lookups = Lookups(token: Self.token)
        let answer = state.answer(try Self.context(challenge), in: Self.space, from: lookups.sources)
        #expect(Self.name(answer) == expected)
        #expect(state.failureCount(in: Self.space) == 1 && state.inUse[.server] == nil)
        let forgets = lookups.asked.withLock { $0 }.contains("forget example.com")
        #expect(forgets == (source == .preemptive))
    }

    /// A Digest credential whose nonce only went stale is sent again, not counted as refused;
    /// refused with the same nonce, it is.
    @Test func aStaleDigestNonceIsNotARefusal() throws {
        let first = try Self.context(#"Digest realm="r", nonce="n1", qop="auth""#)
        let digest = try #require(first.selected.digest)
        let alice = URLCredential(user: "alice", password: "a", persistence: .forSession)
        for (challenge, expected) in [
            (#"Digest realm="r", nonce="n2", qop="auth", stale=true"#, "resend alice"),
            (#"Digest realm="r", nonce="n1", qop="auth""#, "use stored from storage"),
        ] {
            var state = AuthenticationState()
            state.keep(DigestSession(challenge: digest), for: Self.space)
            state.use(
                .init(space: Self.space, credential: alice, source: .delegate, scheme: .digest, basicHeader: nil),
                for: .server
            )
            let answer = state.answer(
                try Self.context(challenge),
                in: Self.space,
                from: Lookups(stored: Self.stored).sources
            )
            #expect(Self.name(answer) == expected, "\(challenge)")
            #expect(state.failureCount(in: Self.space) == (expected == "resend alice" ? 0 : 1))
        }
    }

    /// A delegate's default handling and a client certificate take the stored credential once.
    @Test func theStoredCredentialIsTakenOnce() {
        var state = AuthenticationState()
        #expect(state.takeStoredCredential(in: Self.space, from: { nil }) == nil)
        #expect(!state.hasTriedStoredCredential(in: Self.space), "nothing stored: not tried")
        #expect(state.takeStoredCredential(in: Self.space, from: { Self.stored })?.user == "stored")
        #expect(state.takeStoredCredential(in: Self.space, from: { Self.stored }) == nil)
    }
}
