import Foundation
import KeyjarCore
import KeyjarProtocol
import KeyjarStore

extension KeyjarService {
    /// Answers one request (after the handshake). Credential requests that touch the Secret
    /// Service do so off the actor.
    nonisolated func handle(_ request: Request, from client: ClientConnection) async throws(WireError) -> Response {
        switch request {
        case .setCredential(let space, let user, let password, let makeDefault):
            try await runSecrets { try $0.storePassword(password, for: space, user: user) }
            let record = CredentialRecord(
                space: space, user: user, persistence: .permanent, isDefault: makeDefault,
                created: Date().timeIntervalSince1970)
            return .committed(sequence: try await commit([.saveCredential(record)]))
        case .removeCredential(let space, let user):
            try await runSecrets { _ = try $0.removePassword(for: space, user: user) }
            return .committed(sequence: try await commit([.removeCredential(space, user: user)]))
        case .password(let space, let user):
            guard try await hasCredential(space, user: user) else { return .password(password: nil) }
            let password = try await runSecrets { try $0.password(for: space, user: user) }
            _ = try? await commit([.credentialUsed(space, user: user, at: Date().timeIntervalSince1970)])
            return .password(password: password)
        default:
            return try await handleLocally(request, from: client)
        }
    }

    private func hasCredential(_ space: ProtectionSpace, user: String) throws(WireError) -> Bool {
        do {
            return try database.credentialRecords().contains { $0.space == space && $0.user == user }
        } catch {
            throw storageFailure(error)
        }
    }

    /// Runs a Secret Service call on a thread of its own (it blocks on D-Bus), mapping failures
    /// to a wire error that says what to do and never includes a password.
    private nonisolated func runSecrets<T: Sendable>(_ body: @escaping @Sendable (any SecretStore) throws -> T) async throws(WireError) -> T {
        let secrets = self.secrets
        let result: Result<T, any Error> = await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: Result { try body(secrets) }) }
        }
        switch result {
        case .success(let value): return value
        case .failure(let error as SecretStoreError):
            throw WireError(code: WireError.secretsUnavailable, message: error.description)
        case .failure(let error):
            throw WireError(code: WireError.secretsUnavailable, message: "the secret store failed: \(error)")
        }
    }

    private func handleLocally(_ request: Request, from client: ClientConnection) throws(WireError) -> Response {
        switch request {
        case .hello(let version, _):
            return .hello(version: version, server: KeyjarServer.version, sequence: (try? database.latestSequence()) ?? 0)
        case .subscribe(let after):
            return try subscribe(client, after: after)
        case .snapshot:
            do { return .snapshot(snapshot: try snapshot()) } catch { throw storageFailure(error) }
        case .status:
            return .status(status: status())

        case .cookieHeader(let wire):
            return .cookieHeader(header: jar.cookieHeader(for: try Self.context(wire)))
        case .cookies(let wire):
            return .cookies(cookies: jar.cookies(for: try Self.context(wire)))
        case .setCookies(let headers, let wire):
            let context = try Self.context(wire)
            var changes: [CookieChange] = []
            var outcomes: [CookieOutcome] = []
            for header in headers {
                switch jar.setCookie(header, context: context) {
                case .success(let made):
                    changes += made
                    outcomes.append(nil)
                case .failure(let rejection):
                    outcomes.append(rejection.description)
                }
            }
            return .cookieOutcomes(outcomes: outcomes, sequence: try commitCookies(changes))
        case .insertCookies(let cookies):
            var changes: [CookieChange] = []
            var outcomes: [CookieOutcome] = []
            for cookie in cookies {
                switch jar.insert(cookie) {
                case .success(let made):
                    changes += made
                    outcomes.append(nil)
                case .failure(let rejection):
                    outcomes.append(rejection.description)
                }
            }
            return .cookieOutcomes(outcomes: outcomes, sequence: try commitCookies(changes))
        case .deleteCookies(let identities):
            return .committed(sequence: try commitCookies(identities.compactMap { jar.remove($0) }))
        case .clearCookies(let domain):
            let domain = domain.map(Host.canonicalDomain)
            let changes = jar.removeAll { cookie in domain.map { Host.domainMatches(cookie.domain, $0) } ?? true }
            return .committed(sequence: try commitCookies(changes))
        case .removeCookiesCreated(let since):
            let changes = jar.removeAll { $0.creation.timeIntervalSince1970 >= since }
            return .committed(sequence: try commitCookies(changes))
        case .listCookies(let domain):
            let now = Date()
            let domain = domain.map(Host.canonicalDomain)
            return .cookies(
                cookies: jar.allCookies.filter { cookie in
                    !cookie.isExpired(at: now) && (domain.map { Host.domainMatches(cookie.domain, $0) } ?? true)
                }.sorted(by: Self.listingOrder))
        case .importCookies(let format, let text):
            let parsed = format == .netscape ? NetscapeCookieFile.parse(text) : CookieJSONFile.parse(Data(text.utf8))
            let report = jar.importCookies(parsed.cookies, problems: parsed.problems)
            return .importReport(
                imported: report.imported, expired: report.expired, problems: report.problems,
                sequence: try commitCookies(report.changes))
        case .exportCookies(let format, let includeSameSite):
            let now = Date()
            let cookies = jar.allCookies.filter { !$0.isExpired(at: now) }.sorted(by: Self.listingOrder)
            switch format {
            case .netscape: return .exported(text: NetscapeCookieFile.serialize(cookies, includeSameSite: includeSameSite))
            case .json: return .exported(text: String(decoding: CookieJSONFile.serialize(cookies), as: UTF8.self))
            }

        case .policy:
            return .policy(policy: jar.policy)
        case .setPolicy(let policy):
            var canonical = policy
            canonical.domainRules = Dictionary(
                policy.domainRules.map { (Host.canonicalDomain($0.key), $0.value) },
                uniquingKeysWith: { _, last in last })
            guard canonical != jar.policy else { return .committed(sequence: nil) }
            jar.policy = canonical
            return .committed(sequence: try commit([.policy(canonical)]))

        case .credentials(let space):
            do { return .credentials(records: try database.credentialRecords().filter { $0.space == space }) } catch {
                throw storageFailure(error)
            }
        case .allCredentials:
            do { return .credentials(records: try database.credentialRecords()) } catch { throw storageFailure(error) }
        case .setDefaultCredential(let space, let user):
            guard try hasCredential(space, user: user) else {
                throw WireError(code: WireError.notFound, message: "no stored credential for \(user) at \(space.host)")
            }
            return .committed(sequence: try commit([.setDefaultCredential(space, user: user)]))
        case .setCredential, .removeCredential, .password:
            // Routed through the Secret Service path in `handle`.
            throw WireError(code: WireError.invalidArgument, message: "internal routing error")
        }
    }

    private func commitCookies(_ changes: [CookieChange]) throws(WireError) -> UInt64? {
        changes.isEmpty ? nil : try commit([.cookies(changes)])
    }

    static func listingOrder(_ a: Cookie, _ b: Cookie) -> Bool {
        (a.domain, a.path, a.name, a.hostOnly ? 1 : 0) < (b.domain, b.path, b.name, b.hostOnly ? 1 : 0)
    }

    static func context(_ wire: WireCookieContext) throws(WireError) -> CookieContext {
        guard let url = URL(string: wire.url),
            let context = CookieContext(
                url: url, mainDocumentURL: wire.mainDocumentURL.flatMap(URL.init(string:)),
                isTopLevelNavigation: wire.isTopLevelNavigation, httpMethod: wire.method,
                api: wire.nonHTTP ? .nonHTTP : .http)
        else {
            throw WireError(code: WireError.invalidArgument, message: "'\(wire.url)' is not a URL with a host")
        }
        return context
    }
}
