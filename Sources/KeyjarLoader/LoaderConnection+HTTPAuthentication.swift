import CCurl
import Foundation
import FoundationNetworking
import Keyjar
import KeyjarAuth
import KeyjarCore
import KeyjarDigest
import KeyjarLocks
import KeyjarTransfer
import Synchronization

extension LoaderConnection {
    /// The schemes Keyjar answers itself (Basic, Digest, Bearer) plus those this libcurl can do.
    static let supportedSchemes: Set<AuthenticationScheme> = {
        var schemes: Set<AuthenticationScheme> = [.basic, .digest, .bearer]
        if let info = keyjar_version_info()?.pointee {
            if info.features & CURL_VERSION_NTLM != 0 { schemes.insert(.ntlm) }
            if info.features & CURL_VERSION_SPNEGO != 0 { schemes.insert(.negotiate) }
        }
        return schemes
    }()

    func isChallengeWeAnswer(_ head: ResponseHead) -> Bool {
        switch head.statusCode {
        case 401: return !head.values(of: "WWW-Authenticate").isEmpty
        case 407: return !head.values(of: "Proxy-Authenticate").isEmpty
        default: return false
        }
    }

    /// Adds what authentication this attempt sends: answers computed from the last
    /// challenge, or Basic or a Bearer token sent pre-emptively to a space that accepted it
    /// before. The pre-emptive credential is a kept one, so a load that may not use the
    /// credential storage (`connectionShouldUseCredentialStorage` answered false) does not
    /// send it.
    func prepareAuthentication(_ request: inout TransferRequest, requestSetsAuthorization: Bool) {
        for (name, value) in authentication.headers {
            request.headerLines.removeAll { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            request.headerLines.append("\(name): \(value)")
        }
        request.curlAuthentication = authentication.curlServerAuthentication
        request.curlProxyAuthentication = authentication.proxyCredential { proxyAddress(for: request.url) }
        request.proxy = loader.configuration.proxy
        guard credentialStorage != nil, authentication.headers["Authorization"] == nil, !requestSetsAuthorization,
            authentication.curlServerAuthentication == nil,
            let known = loader.memory.withLock({ $0.preemptiveBasic(for: request.url) })
        else { return }
        request.headerLines.append("Authorization: \(known.header)")
        authentication.use(
            .init(
                space: known.space,
                credential: known.credential,
                source: .preemptive,
                scheme: known.scheme,
                basicHeader: known.header
            ),
            for: .server
        )
    }

    /// A 401/407 completed: answer it (URL credential, stored default, delegate) or deliver it.
    func answerChallenge(_ head: ResponseHead, response: HTTPURLResponse, body: Data) {
        let target: AuthorizationTarget = head.statusCode == 407 ? .proxy : .server
        let parsed = ChallengeParser.parse(head.values(of: target.challengeHeaderName))
        // A proxy is answered by libcurl, which has no tokens to give it.
        let supported = target == .proxy ? Self.supportedSchemes.subtracting([.bearer]) : Self.supportedSchemes
        let candidates = ChallengeSelector.candidates(in: parsed.challenges, supported: supported)
        guard !candidates.isEmpty else { return deliverFinal(response, body: body) }
        let context = HTTPChallengeContext(
            head: head,
            response: response,
            body: body,
            target: target,
            candidates: candidates,
            index: 0
        )
        considerChallenge(context)
    }

    private func space(for context: HTTPChallengeContext) -> ProtectionSpace? {
        let challenge = context.selected.challenge
        switch context.target {
        case .server:
            guard let url = currentRequest.url else { return nil }
            return ProtectionSpace(challenge: challenge, requestURL: url)
        case .proxy:
            guard let proxy = proxyAddress(for: currentRequest.url) else { return nil }
            return ProtectionSpace(
                challenge: challenge,
                proxyHost: proxy.host,
                proxyPort: proxy.port,
                proxyType: proxy.type
            )
        }
    }

    /// The proxy a request for `url` goes through.
    func proxyAddress(for url: URL?) -> ProxyAddress? {
        ProxyAddress(configured: loader.configuration.proxy, for: url)
    }

    /// Answers `context` as ``AuthenticationState/answer(_:in:from:)`` decides.
    private func considerChallenge(_ context: HTTPChallengeContext) {
        guard let space = space(for: context) else { return deliverFinal(context.response, body: context.body) }
        let url = currentRequest.url
        let sources = ChallengeAnswer.Sources(
            urlCredential: url.flatMap { url in
                guard let user = url.user(percentEncoded: false), let password = url.password(percentEncoded: false)
                else { return nil }
                return (user, password)
            },
            stored: { self.storedCredential(for: space) },
            refreshableToken: { self.refreshableToken(for: space, user: $0) },
            proposedStored: { self.proposedStoredCredential(for: space) },
            forgetPreemptive: { forgotten in self.loader.memory.withLock { $0.forgetPreemptive(space: forgotten) } }
        )
        switch authentication.answer(context, in: space, from: sources) {
        case .resend(let previous):
            use(previous.credential, source: previous.source, space: space, context: context)
        case .refreshToken(let record, let rejected):
            startTokenRefresh(record, rejected: rejected, space: space, context: context)
        case .use(let credential, let source):
            use(credential, source: source, space: space, context: context)
        case .askDelegate(let proposed, let failures):
            present(
                .http(context),
                space: space.foundationSpace,
                proposedCredential: proposed,
                previousFailureCount: failures,
                failureResponse: context.response,
                error: nil
            )
        }
    }

    /// The credentials the storage keeps for a space, by user, when this load may read the
    /// storage (a server-trust space's users are the certificates trusted).
    func storedCredentials(for space: ProtectionSpace) -> [String: URLCredential]? {
        credentialStorage?.credentials(for: space.foundationSpace)
    }

    /// The shared store behind the storage, when this load may read the storage: a token
    /// refresh goes through its keyjard.
    var sharedCredentialStorage: SharedCredentialStorage? { credentialStorage as? SharedCredentialStorage }

    /// The storage's answer for a space, when this load may read the storage.
    func storedCredential(for space: ProtectionSpace) -> URLCredential? {
        guard let storage = credentialStorage else { return nil }
        return storage.defaultCredential(for: space.foundationSpace)
    }

    /// What to propose to a delegate when nothing has failed yet: the storage's answer, or (with
    /// several users and no default) its most specific candidate.
    func proposedStoredCredential(for space: ProtectionSpace) -> URLCredential? {
        guard let storage = credentialStorage else { return nil }
        if let shared = storage as? SharedCredentialStorage {
            return shared.proposedCredential(for: space.foundationSpace)
        }
        return storage.defaultCredential(for: space.foundationSpace)
    }

    func resolveHTTPChallenge(
        _ challenge: URLAuthenticationChallenge,
        context: HTTPChallengeContext,
        _ disposition: ChallengeDisposition
    ) {
        guard let space = space(for: context) else { return deliverFinal(context.response, body: context.body) }
        switch disposition {
        case .use(let credential):
            use(credential, source: .delegate, space: space, context: context)
        case .continueWithoutCredential:
            deliverFinal(context.response, body: context.body)
        case .cancel:
            deliverCancellation(of: challenge)
            fail(
                LoaderError.make(
                    .userCancelledAuthentication,
                    "Authentication for \(space.host) was cancelled",
                    url: currentRequest.url
                )
            )
        case .performDefaultHandling:
            // Apple's default: the stored credential unless it already failed; else no credential.
            if let stored = authentication.takeStoredCredential(in: space, from: { storedCredential(for: space) }) {
                use(stored, source: .storage, space: space, context: context)
            } else {
                deliverFinal(context.response, body: context.body)
            }
        case .rejectProtectionSpace:
            var next = context
            next.index += 1
            if next.index < next.candidates.count {
                considerChallenge(next)
            } else {
                deliverFinal(context.response, body: context.body)
            }
        }
    }

    /// Retries with `credential` answering the selected challenge.
    func use(
        _ credential: URLCredential,
        source: AuthenticationState.Source,
        space: ProtectionSpace,
        context: HTTPChallengeContext
    ) {
        guard let user = credential.user, let password = credential.password else {
            return deliverFinal(context.response, body: context.body)
        }
        let selected = context.selected
        let target = context.target
        var basicHeader: String?
        do {
            switch (selected.scheme, target) {
            case (.basic, .server):
                let header = try BasicAuthorization(
                    user: user,
                    password: password,
                    challenge: selected.challenge,
                    target: target
                ).headerValue
                authentication.send(header, for: target)
                basicHeader = header
            case (.digest, .server):
                guard let digest = selected.digest, let url = currentRequest.url else {
                    return deliverFinal(context.response, body: context.body)
                }
                var session =
                    authentication.digestSessions[space].flatMap { $0.challenge.nonce == digest.nonce ? $0 : nil }
                    ?? DigestSession(challenge: digest)
                let authorization = try session.authorize(
                    user: user,
                    password: password,
                    method: currentRequest.httpMethod ?? "GET",
                    uri: Self.requestTarget(url),
                    target: target
                )
                authentication.keep(session, for: space)
                authentication.send(authorization.headerValue, for: target)
            case (.bearer, .server):
                // RFC 6750 §2.1; the password of a token credential is the token.
                let header = try BearerAuthorization(token: password).headerValue
                authentication.send(header, for: target)
                basicHeader = header
            case (.ntlm, .server), (.negotiate, .server):
                authentication.answerServerThroughCurl(
                    scheme: Self.curlScheme(selected.scheme),
                    user: user,
                    password: password
                )
            case (_, .proxy):
                // Proxy authentication is libcurl's: it answers the proxy (CONNECT included).
                guard let proxy = proxyAddress(for: currentRequest.url) else {
                    return deliverFinal(context.response, body: context.body)
                }
                authentication.answerProxy(
                    .init(scheme: Self.curlScheme(selected.scheme), user: user, password: password, proxy: proxy)
                )
            }
        } catch {
            return fail(
                LoaderError.make(
                    .userAuthenticationRequired,
                    "The credential for \(space.host) cannot be sent: \(error)",
                    url: currentRequest.url
                )
            )
        }
        authentication.use(
            .init(
                space: space,
                credential: credential,
                source: source,
                scheme: selected.scheme,
                basicHeader: basicHeader
            ),
            for: target
        )
        startAttempt()
    }

    /// The load got past authentication: keep the credential by its persistence and, when it
    /// is stored, remember a Basic space for pre-emptive use.
    func authenticationSucceeded() {
        for (_, inUse) in authentication.inUse {
            let stored: Bool
            switch inUse.source {
            case .storage, .preemptive:
                stored = true
            case .url:
                stored = false
            case .delegate:
                stored = keepByPersistence(inUse.credential, for: inUse.space)
            }
            if stored, let header = inUse.basicHeader, let url = currentRequest.url {
                loader.memory.withLock {
                    $0.rememberPreemptive(
                        url: url,
                        space: inUse.space,
                        scheme: inUse.scheme,
                        header: header,
                        credential: inUse.credential
                    )
                }
            }
        }
        authentication.succeeded()
    }

    /// Stores a delegate's credential that worked, by its persistence (`.none`: never; the
    /// storage makes a space's first credential its default); true when it was stored.
    func keepByPersistence(_ credential: URLCredential, for space: ProtectionSpace) -> Bool {
        guard credential.persistence != .none, let storage = credentialStorage else { return false }
        if let shared = storage as? SharedCredentialStorage {
            do {
                try shared.store(credential, for: space.foundationSpace)
                return true
            } catch {
                return false
            }
        }
        let foundationSpace = space.foundationSpace
        if storage.defaultCredential(for: foundationSpace) == nil {
            storage.setDefaultCredential(credential, for: foundationSpace)
        } else {
            storage.set(credential, for: foundationSpace)
        }
        return true
    }

    static func curlScheme(_ scheme: AuthenticationScheme) -> Int {
        switch scheme {
        case .basic: return keyjar_auth_basic()
        case .digest: return keyjar_auth_digest()
        case .ntlm: return keyjar_auth_ntlm()
        case .negotiate: return keyjar_auth_negotiate()
        // Never handed to libcurl: Keyjar sends the header itself, and not to proxies.
        case .bearer: return keyjar_auth_bearer()
        }
    }

    /// The request-target as sent: path and query.
    static func requestTarget(_ url: URL) -> String {
        let path = url.path(percentEncoded: true)
        let query = url.query(percentEncoded: true).map { "?" + $0 } ?? ""
        return (path.isEmpty ? "/" : path) + query
    }
}
