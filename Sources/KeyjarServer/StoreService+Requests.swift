import Foundation
import KeyjarCodec
import KeyjarCore
import KeyjarProtocol
import KeyjarStore
import NIOCore
import NIOPosix

extension StoreService {
    /// A request's answer: computed on the loop at once, or deferred (the Secret Service, an
    /// import in chunks) and sent when its future completes.
    enum Answer {
        case immediate(Result<Response, WireError>)
        case deferred(EventLoopFuture<Response>)
    }

    /// Answers one request (after the handshake). Runs on the event loop.
    func handle(_ request: Request, from client: ServedClient) -> Answer {
        // Whatever this request sees or does comes after every event committed before it.
        flushBroadcasts()
        // For the answers that complete later: they run on this loop again.
        let origin = NIOLoopBound(client, eventLoop: eventLoop)
        switch request {
        case .setCredential(let space, let user, let password, let makeDefault):
            guard space.authenticationMethod.keepsSecret else {
                // A trust decision is a certificate's fingerprint, public: nothing goes to the
                // Secret Service, and nothing may pose as its secret.
                guard password.isEmpty else {
                    return .immediate(
                        .failure(
                            WireError(
                                code: WireError.invalidArgument,
                                message: "a server-trust decision has no password"
                            )
                        )
                    )
                }
                return .immediate(
                    Result { () throws(WireError) in
                        .committed(
                            sequence: try self.credentials.saveCredential(
                                space,
                                user: user,
                                makeDefault: makeDefault,
                                origin: client
                            )
                        )
                    }
                )
            }
            return .deferred(
                credentials.saveCredentials(
                    [CredentialWrite(space: space, user: user, password: password, makeDefault: makeDefault)],
                    origin: origin
                )
            )
        case .removeCredential(let space, let user):
            guard space.authenticationMethod.keepsSecret else {
                return .immediate(
                    Result { () throws(WireError) in
                        .committed(sequence: try self.commit([.removeCredential(space, user: user)], origin: client))
                    }
                )
            }
            return .deferred(credentials.removeCredential(space, user: user, origin: origin))
        case .repairCredentials(let removeUnpaired):
            return .deferred(
                credentials.repairCredentials(removeUnpaired: removeUnpaired, origin: origin)
            )
        case .saveCredentials(let writes):
            return .deferred(credentials.saveCredentials(writes, origin: origin))
        case .refreshToken(let space, let user):
            return .deferred(credentials.refreshToken(space, user: user))
        case .beginTokenRefresh(let space, let user, let rejected):
            return .deferred(
                credentials.beginTokenRefresh(.init(space: space, user: user), rejected: rejected, origin: origin)
            )
        case .finishTokenRefresh(let space, let user, let outcome):
            return .deferred(
                credentials.finishTokenRefresh(.init(space: space, user: user), outcome: outcome, origin: origin)
            )
        case .unlockSecrets(let passphrase, let create, let lockAfterIdle):
            return .deferred(credentials.unlock(passphrase: passphrase, create: create, lockAfterIdle: lockAfterIdle))
        case .lockSecrets:
            return .deferred(credentials.lock())
        case .migrateSecrets(let backend, let path, let passphrase):
            return .deferred(credentials.migrateSecrets(backend: backend, path: path, passphrase: passphrase))
        case .importCookies(let format, let text, let firstLine):
            return .deferred(importCookies(text, format: format, firstLine: firstLine, origin: origin))
        case .beginImport:
            return .deferred(beginImport(origin: origin))
        case .finishImport:
            return .deferred(finishImport(origin: origin))
        case .password(let space, let user):
            let record: CredentialRecord
            do {
                guard let stored = try credentials.record(space, user: user) else {
                    return .immediate(.success(.password(password: nil)))
                }
                record = stored
            } catch {
                return .immediate(.failure(error))
            }
            guard space.authenticationMethod.keepsSecret else { return .immediate(.success(.password(password: ""))) }
            return .deferred(
                credentials.offLoop { secrets in try secrets.password(for: space, user: user) }.map { password in
                    // When it was last used is bookkeeping: recorded after the reply is
                    // written, so that answering a challenge does not wait for a commit, and
                    // to the minute, so that a client answering challenges in a loop does
                    // not make a commit of each (docs/performance.md, "A 401 answered from
                    // the store").
                    let used = Date().timeIntervalSince1970
                    if Self.isWorthRecording(use: used, after: record.lastUsed) {
                        self.eventLoop.execute {
                            _ = try? self.commit([.credentialUsed(space, user: user, at: used)], origin: origin.value)
                        }
                    }
                    return .password(password: password)
                }
            )
        case .status:
            // The comparison asks D-Bus; the rest is read on the loop once it answers.
            return .deferred(
                credentials.inLane {
                    self.credentials.auditCredentials().and(self.credentials.secretsLock()).map { audit, lock in
                        var status = self.status(health: audit.health, credentialMismatches: audit.mismatches)
                        status.secretsLock = lock
                        return .status(status: status)
                    }
                }
            )
        default:
            do {
                return .immediate(.success(try handleOnLoop(request, from: client)))
            } catch {
                return .immediate(.failure(error))
            }
        }
    }

    private func handleOnLoop(_ request: Request, from client: ServedClient) throws(WireError) -> Response {
        switch request {
        case .hello(let version, _):
            return .hello(
                version: version,
                server: KeyjarServer.version,
                sequence: state.latestSequence
            )
        case .subscribe(let after):
            return try subscribe(client, after: after)
        case .follow(let after):
            return try follow(client, after: after)
        case .snapshot:
            return .snapshot(snapshot: try snapshot())

        case .cookieHeader(let wire):
            return .cookieHeader(header: state.jar.cookieHeader(for: try Self.context(wire)))
        case .cookies(let wire):
            return .cookies(cookies: state.jar.cookies(for: try Self.context(wire)))
        case .setCookies(let headers, let wire):
            let context = try Self.context(wire)
            return try storeEach(headers, origin: client) { jar, header in jar.setCookie(header, context: context) }
        case .insertCookies(let cookies):
            return try storeEach(cookies, origin: client) { jar, cookie in jar.insert(cookie) }
        case .deleteCookies(let identities):
            return .committed(
                sequence: try commitCookies(identities.compactMap { state.jar.remove($0) }, origin: client)
            )
        case .clearCookies(let domain):
            let domain = domain.map(Host.canonicalDomain)
            let changes = state.jar.removeAll { cookie in domain.map { Host.domainMatches(cookie.domain, $0) } ?? true }
            return .committed(sequence: try commitCookies(changes, origin: client))
        case .removeCookiesCreated(let since):
            let changes = state.jar.removeAll { $0.creation.timeIntervalSince1970 >= since }
            return .committed(sequence: try commitCookies(changes, origin: client))
        case .listCookies(let domain):
            let now = Date()
            let domain = domain.map(Host.canonicalDomain)
            return .cookies(
                cookies: state.jar.allCookies.filter { cookie in
                    !cookie.isExpired(at: now) && (domain.map { Host.domainMatches(cookie.domain, $0) } ?? true)
                }.sorted(by: Self.listingOrder)
            )
        case .exportCookies(let format, let includeSameSite):
            let now = Date()
            let cookies = state.jar.allCookies.filter { !$0.isExpired(at: now) }.sorted(by: Self.listingOrder)
            switch format {
            case .netscape:
                return .exported(
                    text: NetscapeCookieFile.serialize(cookies, includeSameSite: includeSameSite),
                    omitted: cookies.count { !NetscapeCookieFile.canCarry($0) }
                )
            case .json:
                return .exported(
                    text: String(decoding: CookieJSONFile.serialize(cookies), as: UTF8.self),
                    omitted: 0
                )
            }

        case .policy:
            return .policy(policy: state.jar.policy)
        case .setPolicy(let policy):
            var canonical = policy
            canonical.domainRules = Dictionary(
                policy.domainRules.map { (Host.canonicalDomain($0.key), $0.value) },
                uniquingKeysWith: { _, last in last }
            )
            guard canonical != state.jar.policy else { return .committed(sequence: nil) }
            state.jar.policy = canonical
            return .committed(sequence: try commit([.policy(canonical)], origin: client))

        case .credentials(let space):
            return .credentials(records: try credentials.records().filter { $0.space == space })
        case .allCredentials:
            return .credentials(records: try credentials.records())
        case .credentialChoice(let space):
            let choice = CredentialChoice(for: space, among: try credentials.records())
            return .credentialChoice(candidates: choice.candidates.map(\.record), preferred: choice.preferred)
        case .setDefaultCredential(let space, let user):
            guard try credentials.hasCredential(space, user: user) else {
                throw WireError(code: WireError.notFound, message: "no stored credential for \(user) at \(space.host)")
            }
            return .committed(sequence: try commit([.setDefaultCredential(space, user: user)], origin: client))
        case .setCredential, .removeCredential, .password, .status, .repairCredentials, .importCookies, .beginImport,
            .finishImport, .saveCredentials, .refreshToken, .beginTokenRefresh, .finishTokenRefresh, .unlockSecrets,
            .lockSecrets, .migrateSecrets:
            // Answered later, through `handle`.
            throw WireError(code: WireError.invalidArgument, message: "internal routing error")
        }
    }

    /// Stores each item in the jar, commits all the changes at once, and answers with one
    /// outcome per item (nil when stored, else the rejection in words).
    private func storeEach<Item>(
        _ items: [Item],
        origin: ServedClient,
        _ store: (inout CookieJar, Item) -> Result<[CookieChange], CookieRejection>
    ) throws(WireError) -> Response {
        let (changes, rejections) = state.jar.storeEach(items, store)
        return .cookieOutcomes(
            outcomes: rejections.map { $0?.description },
            sequence: try commitCookies(changes, origin: origin)
        )
    }

    func commitCookies(_ changes: [CookieChange], origin: ServedClient) throws(WireError) -> UInt64? {
        changes.isEmpty ? nil : try commit([.cookies(changes)], origin: origin)
    }

    static func listingOrder(_ a: Cookie, _ b: Cookie) -> Bool {
        (a.domain, a.path, a.name, a.hostOnly ? 1 : 0) < (b.domain, b.path, b.name, b.hostOnly ? 1 : 0)
    }

    static func context(_ wire: WireCookieContext) throws(WireError) -> CookieContext {
        guard let url = URL(string: wire.url),
            let context = CookieContext(
                url: url,
                mainDocumentURL: wire.mainDocumentURL.flatMap(URL.init(string:)),
                isTopLevelNavigation: wire.isTopLevelNavigation,
                httpMethod: wire.method,
                api: wire.nonHTTP ? .nonHTTP : .http
            )
        else {
            throw WireError(code: WireError.invalidArgument, message: "'\(wire.url)' is not a URL with a host")
        }
        return context
    }
}

extension StoreService {
    /// How old a credential's recorded last use may grow before a use is written again.
    static let lastUseResolution: Double = 60

    /// Whether a credential's use at `time` is written, given the use recorded before: the
    /// first use, one ``lastUseResolution`` or more after it, and one before it (a clock set
    /// back, a restored backup's) are; uses within the minute after it are not.
    static func isWorthRecording(use time: Double, after recorded: Double?) -> Bool {
        guard let recorded else { return true }
        return time - recorded >= lastUseResolution || time < recorded
    }
}
