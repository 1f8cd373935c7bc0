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
                            sequence: try self.saveCredential(
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
                saveCredentials(
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
            return .deferred(inCredentialLane { self.removeCredential(space, user: user, origin: origin) })
        case .repairCredentials(let removeUnpaired):
            return .deferred(
                inCredentialLane { self.repairCredentials(removeUnpaired: removeUnpaired, origin: origin) }
            )
        case .saveCredentials(let writes):
            return .deferred(saveCredentials(writes, origin: origin))
        case .refreshToken(let space, let user):
            return .deferred(refreshToken(space, user: user))
        case .beginTokenRefresh(let space, let user, let rejected):
            return .deferred(beginTokenRefresh(.init(space: space, user: user), rejected: rejected, origin: origin))
        case .finishTokenRefresh(let space, let user, let outcome):
            return .deferred(finishTokenRefresh(.init(space: space, user: user), outcome: outcome, origin: origin))
        case .importCookies(let format, let text, let firstLine):
            return .deferred(importCookies(text, format: format, firstLine: firstLine, origin: origin))
        case .beginImport:
            return .deferred(beginImport(origin: origin))
        case .finishImport:
            return .deferred(finishImport(origin: origin))
        case .password(let space, let user):
            do {
                guard try hasCredential(space, user: user) else {
                    return .immediate(.success(.password(password: nil)))
                }
            } catch {
                return .immediate(.failure(error))
            }
            guard space.authenticationMethod.keepsSecret else { return .immediate(.success(.password(password: ""))) }
            return .deferred(
                offLoop { secrets in try secrets.password(for: space, user: user) }.map { password in
                    // When it was last used is bookkeeping: recorded after the reply is
                    // written, so that answering a challenge does not wait for a commit.
                    let used = Date().timeIntervalSince1970
                    self.eventLoop.execute {
                        _ = try? self.commit([.credentialUsed(space, user: user, at: used)], origin: origin.value)
                    }
                    return .password(password: password)
                }
            )
        case .status:
            // The comparison asks D-Bus; the rest is read on the loop once it answers.
            return .deferred(
                inCredentialLane {
                    self.auditCredentials().map { health, mismatches in
                        .status(
                            status: self.status(
                                health: health,
                                credentialMismatches: mismatches
                            )
                        )
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

    /// Saves a credential's metadata; the space's first credential becomes its default (the
    /// rule is the model's, applied here alone so that every client agrees).
    func saveCredential(
        _ space: ProtectionSpace,
        user: String,
        makeDefault: Bool,
        origin: ServedClient
    ) throws(WireError) -> UInt64? {
        let stored: [CredentialRecord]
        do { stored = try database.credentialRecords() } catch { throw storageFailure(error) }
        var record = CredentialRecord(
            space: space,
            user: user,
            persistence: .permanent,
            isDefault: false,
            created: Date().timeIntervalSince1970
        )
        record.isDefault = record.becomesDefault(asked: makeDefault, stored: stored)
        return try commit([.saveCredential(record)], origin: origin)
    }

    /// Removes the secrets, then the record. If the record cannot be removed, the secrets (read
    /// first) are put back, so the credential stays whole. Journalled first: after a crash
    /// between the two, keyjard finishes the removal at its next start.
    private func removeCredential(
        _ space: ProtectionSpace,
        user: String,
        origin: NIOLoopBound<ServedClient>
    ) -> EventLoopFuture<Response> {
        let key = SecretStoreKey(space: space, user: user)
        do { _ = try commit([.beginSecretWrites([.init(.remove, key)])]) } catch {
            return eventLoop.makeFailedFuture(error)
        }
        return offLoop { secrets -> StoredSecrets in
            let previous = try StoredSecrets(of: space, user: user, in: secrets)
            try secrets.removeSecret(.refreshToken, for: space, user: user)
            try secrets.removePassword(for: space, user: user)
            return previous
        }.flatMap { previous in
            do {
                let sequence = try self.commit(
                    [.removeCredential(space, user: user), .endSecretWrites([key])],
                    origin: origin.value
                )
                return self.eventLoop.makeSucceededFuture(.committed(sequence: sequence))
            } catch {
                return self.offLoop { secrets in previous.restore(space, user: user, in: secrets) }
                    .flatMapThrowing { _ in throw error }
            }
        }.flatMapErrorThrowing { error in
            _ = try? self.commit([.endSecretWrites([key])])
            throw error
        }
    }

    /// Compares the records with the secret store's keys and makes pairs again without losing
    /// a secret: a password without a record (a database restored from before it was stored, a
    /// crash between the two writes) is adopted back as a permanent credential, its item
    /// carrying the space and user; a record without its password is kept, since the user may
    /// still know the password, and removed only when `removeUnpaired` asks.
    private func repairCredentials(
        removeUnpaired: Bool,
        origin: NIOLoopBound<ServedClient>
    ) -> EventLoopFuture<Response> {
        offLoop { secrets in try secrets.keys() }.flatMapThrowing { keys in
            let stored = try self.credentialRecords()
            let mismatches = CredentialAudit.mismatches(records: stored, secrets: keys)
            var writes: [StoreDatabase.Write] = []
            var records = stored
            for mismatch in mismatches {
                switch mismatch.kind {
                case .credentialMissing:
                    var record = CredentialRecord(
                        space: mismatch.space,
                        user: mismatch.user,
                        persistence: .permanent,
                        isDefault: false,
                        created: Date().timeIntervalSince1970
                    )
                    record.isDefault = record.becomesDefault(asked: false, stored: records)
                    records.append(record)
                    writes.append(.saveCredential(record))
                case .passwordMissing where removeUnpaired:
                    writes.append(.removeCredential(mismatch.space, user: mismatch.user))
                case .passwordMissing:
                    break
                }
            }
            let sequence = writes.isEmpty ? nil : try self.commit(writes, origin: origin.value)
            return .credentialsRepaired(mismatches: mismatches, sequence: sequence)
        }
    }

    func credentialRecords() throws(WireError) -> [CredentialRecord] {
        do { return try database.credentialRecords() } catch { throw storageFailure(error) }
    }

    func hasCredential(_ space: ProtectionSpace, user: String) throws(WireError) -> Bool {
        do {
            return try database.credentialRecords().contains { $0.space == space && $0.user == user }
        } catch {
            throw storageFailure(error)
        }
    }

    /// Runs a Secret Service call on the thread pool (it blocks on D-Bus) and comes back to the
    /// loop; failures become a wire error that says what to do and never includes a password.
    func offLoop<T: Sendable>(_ body: @escaping @Sendable (any SecretStore) throws -> T) -> EventLoopFuture<T> {
        let secrets = self.secrets
        return threadPool.runIfActive(eventLoop: eventLoop) { try body(secrets) }.flatMapErrorThrowing { error in
            if let error = error as? SecretStoreError {
                throw WireError(code: WireError.secretsUnavailable, message: error.description)
            }
            if let error = error as? WireError { throw error }
            throw WireError(code: WireError.secretsUnavailable, message: "the secret store failed: \(error)")
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
            return .credentials(records: try credentialRecords().filter { $0.space == space })
        case .allCredentials:
            return .credentials(records: try credentialRecords())
        case .credentialChoice(let space):
            let choice = CredentialChoice(for: space, among: try credentialRecords())
            return .credentialChoice(candidates: choice.candidates.map(\.record), preferred: choice.preferred)
        case .setDefaultCredential(let space, let user):
            guard try hasCredential(space, user: user) else {
                throw WireError(code: WireError.notFound, message: "no stored credential for \(user) at \(space.host)")
            }
            return .committed(sequence: try commit([.setDefaultCredential(space, user: user)], origin: client))
        case .setCredential, .removeCredential, .password, .status, .repairCredentials, .importCookies, .beginImport,
            .finishImport, .saveCredentials, .refreshToken, .beginTokenRefresh, .finishTokenRefresh:
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
