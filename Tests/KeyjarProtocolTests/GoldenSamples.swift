import Foundation
import KeyjarCodec
import KeyjarCore
import KeyjarProtocol

/// One message of the protocol per case and per shape of its optional parts, each with the
/// file in Golden/ that holds its JSON.
///
/// The files were written by the compiler-synthesized `Codable` conformances that defined the
/// format until the hand-written codec replaced them, and are kept byte for byte: they are what
/// older clients and keyjards send. A new case or field gets a new sample, and its file is what
/// the codec writes once the schema and Schemas/protocol.md describe it.
enum GoldenSample {
    case client(ClientMessage)
    case server(ServerMessage)

    static let all: [(name: String, sample: GoldenSample)] = requests + responses + serverMessages

    static let requests: [(name: String, sample: GoldenSample)] = requestCases.map {
        ($0.0, .client(ClientMessage(id: 42, request: $0.1)))
    }

    static let requestCases: [(String, Request)] = [
        ("request-hello", .hello(version: 2, client: "keyjar-test 1.0")),
        ("request-hello-3", .hello(version: 3, client: "keyjar-test 1.0")),
        ("request-subscribe", .subscribe(after: nil)),
        ("request-subscribe-after", .subscribe(after: 17)),
        ("request-follow", .follow(after: 18_446_744_073_709_551_615)),
        ("request-snapshot", .snapshot),
        ("request-status", .status),
        ("request-cookieHeader", .cookieHeader(context: WireCookieContext(url: "https://www.example.com/a?b=c"))),
        ("request-cookies", .cookies(context: fullContext)),
        (
            "request-setCookies",
            .setCookies(headers: [awkward, "b=2; Domain=example.com; Path=/"], context: fullContext)
        ),
        ("request-insertCookies", .insertCookies(cookies: [fullCookie, minimalCookie])),
        ("request-deleteCookies", .deleteCookies(identities: [fullCookie.identity, minimalCookie.identity])),
        // Protocol version 3: the partition key.
        ("request-insertCookies-partitioned", .insertCookies(cookies: [partitionedCookie])),
        ("request-deleteCookies-partitioned", .deleteCookies(identities: [partitionedCookie.identity])),
        ("request-clearCookies", .clearCookies(domain: nil)),
        ("request-clearCookies-domain", .clearCookies(domain: "example.org")),
        ("request-removeCookiesCreated", .removeCookiesCreated(since: 1_700_000_000.5)),
        ("request-listCookies", .listCookies(domain: nil)),
        ("request-listCookies-domain", .listCookies(domain: "example.com")),
        ("request-importCookies", .importCookies(format: .netscape, text: ".a.example\tTRUE\t/\tFALSE\t0\tn\tv\n")),
        ("request-importCookies-firstLine", .importCookies(format: .json, text: "[]", firstLine: 501)),
        ("request-exportCookies", .exportCookies(format: .netscape, includeSameSite: true)),
        ("request-policy", .policy),
        ("request-setPolicy", .setPolicy(policy: policy)),
        ("request-credentials", .credentials(space: space)),
        ("request-allCredentials", .allCredentials),
        ("request-credentialChoice", .credentialChoice(space: proxySpace)),
        ("request-setCredential", .setCredential(space: space, user: "ålice", password: "p\"w", makeDefault: true)),
        ("request-removeCredential", .removeCredential(space: space, user: "alice")),
        ("request-setDefaultCredential", .setDefaultCredential(space: proxySpace, user: "bob")),
        ("request-password", .password(space: space, user: "alice")),
        ("request-repairCredentials", .repairCredentials(removeUnpaired: false)),
        ("request-unlockSecrets", .unlockSecrets(passphrase: "pä\"ss phrase", create: false)),
        ("request-unlockSecrets-create", .unlockSecrets(passphrase: "new one", create: true)),
        ("request-unlockSecrets-lockAfterIdle", .unlockSecrets(passphrase: "p", create: false, lockAfterIdle: 900)),
        ("request-migrateSecrets", .migrateSecrets(backend: "secret-service", path: nil, passphrase: nil)),
        (
            "request-migrateSecrets-encrypted",
            .migrateSecrets(backend: "encrypted", path: "/home/u/s.sealed", passphrase: "p\u{e4}ss")
        ),
        ("request-lockSecrets", .lockSecrets),
        ("request-repairCredentials-removeUnpaired", .repairCredentials(removeUnpaired: true)),
        ("request-beginImport", .beginImport),
        ("request-finishImport", .finishImport),
        // Protocol version 4: tokens.
        ("request-hello-4", .hello(version: 4, client: "keyjar-test 1.0")),
        ("request-saveCredentials", .saveCredentials(writes: [tokenWrite, netrcWrite])),
        (
            "request-saveCredentials-modified",
            .saveCredentials(
                writes: [
                    CredentialWrite(
                        space: ProtectionSpace(host: "example.com", protocol: "https"),
                        user: "alice",
                        password: "pw",
                        modified: 1_700_000_100.5
                    )
                ]
            )
        ),
        ("request-refreshToken", .refreshToken(space: bearerSpace, user: "")),
        ("request-beginTokenRefresh", .beginTokenRefresh(space: bearerSpace, user: "", rejected: "old.t0ken")),
        ("request-beginTokenRefresh-expired", .beginTokenRefresh(space: bearerSpace, user: "", rejected: nil)),
        (
            "request-finishTokenRefresh",
            .finishTokenRefresh(
                space: bearerSpace,
                user: "",
                outcome: .refreshed(accessToken: "new.t0ken", refreshToken: "r2", expires: 1_800_000_000)
            )
        ),
        (
            "request-finishTokenRefresh-kept",
            .finishTokenRefresh(
                space: bearerSpace,
                user: "",
                outcome: .refreshed(accessToken: "new.t0ken", refreshToken: nil, expires: nil)
            )
        ),
        (
            "request-finishTokenRefresh-failed",
            .finishTokenRefresh(space: bearerSpace, user: "", outcome: .failed(revoke: true))
        ),
    ]

    static let responses: [(name: String, sample: GoldenSample)] = responseCases.map {
        ($0.0, .server(.reply(id: 42, response: $0.1)))
    }

    static let responseCases: [(String, Response)] = [
        ("response-hello", .hello(version: 2, server: "keyjard 0.1.0", sequence: 1_234)),
        ("response-ok", .ok),
        ("response-committed", .committed(sequence: nil)),
        ("response-committed-sequence", .committed(sequence: 99)),
        ("response-subscribed", .subscribed(sequence: 0)),
        ("response-snapshot", .snapshot(snapshot: snapshot)),
        ("response-status", .status(status: minimalStatus)),
        ("response-status-full", .status(status: fullStatus)),
        ("response-cookieHeader", .cookieHeader(header: nil)),
        ("response-cookieHeader-header", .cookieHeader(header: "sid=42; theme=dark")),
        ("response-cookies", .cookies(cookies: [fullCookie, minimalCookie])),
        (
            "response-cookieOutcomes",
            .cookieOutcomes(outcomes: [nil, "the Domain attribute is a public suffix"], sequence: 7)
        ),
        ("response-cookieOutcomes-unstored", .cookieOutcomes(outcomes: ["rejected"], sequence: nil)),
        (
            "response-importReport",
            .importReport(
                imported: 3,
                expired: 1,
                problems: [CookieFileProblem(line: 4, message: "expected 7 fields")],
                sequence: 8,
                added: 2,
                replaced: 1,
                evicted: 0
            )
        ),
        ("response-importReport-older", .importReport(imported: 0, expired: 0, problems: [], sequence: nil)),
        ("response-exported", .exported(text: "# Netscape HTTP Cookie File\n.example.com\tTRUE\t/\tFALSE\t0\tn\tv\n")),
        ("response-exported-omitted", .exported(text: "# Netscape HTTP Cookie File\n", omitted: 2)),
        ("response-policy", .policy(policy: CookiePolicy())),
        ("response-credentials", .credentials(records: [fullRecord, minimalRecord])),
        (
            "response-credentialChoice",
            .credentialChoice(candidates: [fullRecord, minimalRecord], preferred: fullRecord)
        ),
        ("response-credentialChoice-none", .credentialChoice(candidates: [], preferred: nil)),
        ("response-password", .password(password: "s3cr\\t")),
        ("response-password-none", .password(password: nil)),
        ("response-credentialsRepaired", .credentialsRepaired(mismatches: mismatches, sequence: 12)),
        ("response-credentialsRepaired-none", .credentialsRepaired(mismatches: [], sequence: nil)),
        // Protocol version 4: tokens.
        ("response-credentials-tokens", .credentials(records: [tokenRecord, netrcRecord])),
        ("response-credentials-modified", .credentials(records: [modifiedRecord])),
        ("response-refreshToken", .refreshToken(token: "r\"1")),
        ("response-refreshToken-none", .refreshToken(token: nil)),
        (
            "response-tokenRefresh-current",
            .tokenRefresh(step: .current(accessToken: "new.t0ken", expires: 1_800_000_000))
        ),
        ("response-tokenRefresh-current-noExpiry", .tokenRefresh(step: .current(accessToken: "t", expires: nil))),
        (
            "response-tokenRefresh-refresh",
            .tokenRefresh(
                step: .refresh(
                    refreshToken: "r1",
                    refresh: TokenRefresh(endpoint: "https://auth.example/token", clientID: "cli")
                )
            )
        ),
    ]

    static let serverMessages: [(name: String, sample: GoldenSample)] = serverCases.map { ($0.0, .server($0.1)) }

    static let serverCases: [(String, ServerMessage)] = [
        ("server-failure", .failure(id: 42, error: WireError(code: WireError.notFound, message: "no such credential"))),
        (
            "server-failure-noID",
            .failure(id: nil, error: WireError(code: WireError.malformedMessage, message: "not valid JSON"))
        ),
        ("server-event-cookies", .event(event: SequencedEvent(sequence: 5, event: .cookies(changes: changes)))),
        (
            "server-event-cookies-partitioned",
            .event(
                event: SequencedEvent(
                    sequence: 8,
                    event: .cookies(changes: [
                        .added(partitionedCookie), .removed(partitionedCookie, cause: .deleted),
                    ])
                )
            )
        ),
        ("server-event-policy", .event(event: SequencedEvent(sequence: 6, event: .policy(policy: policy)))),
        (
            "server-event-credentials",
            .event(
                event: SequencedEvent(
                    sequence: 7,
                    event: .credentials(
                        changes: [
                            CredentialChange(kind: .added, space: space, user: "alice"),
                            CredentialChange(kind: .updated, space: space, user: "alice"),
                            CredentialChange(kind: .defaultChanged, space: proxySpace, user: "bob"),
                            CredentialChange(kind: .removed, space: proxySpace, user: "bob"),
                        ]
                    )
                )
            )
        ),
        (
            "server-event-credentials-bearer",
            .event(
                event: SequencedEvent(
                    sequence: 8,
                    event: .credentials(
                        changes: [CredentialChange(kind: .updated, space: bearerSpace, user: "", record: tokenRecord)]
                    )
                )
            )
        ),
        (
            "server-snapshot",
            .snapshot(snapshot: StoreSnapshot(cookies: [], policy: CookiePolicy(), credentials: [], sequence: 0))
        ),
        ("server-resynchronise", .resynchronise(sequence: 77)),
    ]

    // MARK: Parts

    /// Escaping: quotes, backslash, a slash (which `Codable` escaped), controls, non-ASCII.
    static let awkward = "a=\"q\\b/c\"\t\u{1}é🍪"

    static let fullContext = WireCookieContext(
        url: "http://[::1]:8080/p",
        mainDocumentURL: "https://top.example/",
        isTopLevelNavigation: false,
        method: "POST",
        nonHTTP: true
    )

    /// Every optional field set, times with fractions (binary ones, exact in any JSON).
    static let fullCookie = Cookie(
        name: "session",
        value: "a=b; c",
        domain: "www.example.co.uk",
        hostOnly: true,
        path: "/a/b",
        expires: Date(timeIntervalSince1970: 1_900_000_000.125),
        secure: true,
        httpOnly: true,
        sameSite: .strict,
        creation: Date(timeIntervalSince1970: 1_700_000_000.5),
        lastAccess: Date(timeIntervalSince1970: 1_700_000_001.0625)
    )

    /// No optional field set, whole-second times.
    static let minimalCookie = Cookie(
        name: "",
        value: "",
        domain: "example.com",
        sameSite: .unspecified,
        creation: Date(timeIntervalSince1970: 1_600_000_000)
    )

    /// A partitioned cookie (CHIPS): Secure, with the top-level site it was set under.
    static let partitionedCookie = Cookie(
        name: "__Host-chat",
        value: "1",
        domain: "chat.example",
        hostOnly: true,
        path: "/",
        secure: true,
        sameSite: .none,
        creation: Date(timeIntervalSince1970: 1_700_000_000),
        partitionKey: CookiePartitionKey(scheme: "https", site: "news.example")
    )

    static let changes: [CookieChange] = [
        .added(fullCookie), .replaced(old: minimalCookie, new: fullCookie), .removed(minimalCookie, cause: .deleted),
        .removed(fullCookie, cause: .expired), .removed(fullCookie, cause: .evicted),
        .removed(minimalCookie, cause: .sessionEnded),
    ]

    static let space = ProtectionSpace(
        host: "example.com",
        port: 8443,
        protocol: "https",
        realm: "admin \"area\"",
        authenticationMethod: .httpDigest
    )

    static let proxySpace = ProtectionSpace(
        host: "proxy.example",
        protocol: "http",
        authenticationMethod: .httpBasic,
        proxyType: .http
    )

    /// One domain rule: a dictionary of several has no fixed order in `Codable`'s output.
    static let policy = CookiePolicy(acceptPolicy: .noThirdParty, domainRules: ["ads.example": .block])

    static let fullRecord = CredentialRecord(
        space: space,
        user: "alice",
        persistence: .permanent,
        isDefault: true,
        created: 1_700_000_000.5,
        lastUsed: 1_700_000_100
    )

    static let minimalRecord = CredentialRecord(
        space: proxySpace,
        user: "bob",
        persistence: .permanent,
        isDefault: false,
        created: 0
    )

    static let bearerSpace = ProtectionSpace(host: "api.example", protocol: "https", authenticationMethod: .httpBearer)

    static let tokenWrite = CredentialWrite(
        space: bearerSpace,
        user: "",
        password: "t0k\"en",
        makeDefault: false,
        expires: 1_800_000_000.25,
        refreshToken: "r1",
        tokenRefresh: TokenRefresh(endpoint: "https://auth.example/token", clientID: "cli")
    )

    static let netrcWrite = CredentialWrite(
        space: ProtectionSpace(anySchemeAndPortOf: "ftp.example"),
        user: "alice",
        password: "pw",
        makeDefault: true
    )

    static let tokenRecord = CredentialRecord(
        space: bearerSpace,
        user: "",
        persistence: .permanent,
        isDefault: true,
        created: 1_700_000_000,
        expires: 1_800_000_000.25,
        hasRefreshToken: true,
        tokenRefresh: TokenRefresh(endpoint: "https://auth.example/token", clientID: "cli"),
        isRevoked: true
    )

    /// A password stored again since its first store: `modified` beside `created`.
    static let modifiedRecord = CredentialRecord(
        space: ProtectionSpace(host: "example.com", protocol: "https"),
        user: "alice",
        persistence: .permanent,
        isDefault: true,
        created: 1_700_000_000,
        modified: 1_700_000_100.5
    )

    /// A refresh token kept for git (no endpoint), on a `.netrc`-style space.
    static let netrcRecord = CredentialRecord(
        space: ProtectionSpace(anySchemeAndPortOf: "ftp.example"),
        user: "alice",
        persistence: .permanent,
        isDefault: false,
        created: 0,
        hasRefreshToken: true
    )

    static let snapshot = StoreSnapshot(
        cookies: [fullCookie, minimalCookie],
        policy: CookiePolicy(acceptPolicy: .onlyFromMainDocumentDomain, domainRules: ["ads.example": .sessionOnly]),
        credentials: [fullRecord, minimalRecord],
        sequence: 42
    )

    static let mismatches = [
        CredentialMismatch(kind: .passwordMissing, space: space, user: "alice", noticed: 1_700_000_000.5),
        CredentialMismatch(kind: .credentialMissing, space: proxySpace, user: "bob"),
    ]

    /// Without the parts older keyjards do not send.
    static let minimalStatus = ServiceStatus(
        version: "0.1.0",
        protocolVersion: 1,
        pid: 7,
        socketPath: "/run/user/1000/keyjar/keyjard.sock",
        databasePath: "/home/u/.local/share/keyjar/store.sqlite",
        schemaVersion: 3,
        cookieCount: 2,
        credentialCount: 1,
        sequence: 9,
        secretsBackend: "file",
        secretsHealthy: false,
        secretsDetail: "locked",
        acceptPolicy: .always,
        connectedClients: 1
    )

    static let fullStatus: ServiceStatus = {
        var status = minimalStatus
        status.protocolVersion = 2
        status.secretsHealthy = true
        status.inbound = ServiceStatus.Inbound(
            budget: 67_108_864,
            reserved: 1_024,
            peakReserved: 4_096,
            buffered: 65_536,
            peakBuffered: 131_072,
            maximumConnections: 256,
            pausedConnections: 1
        )
        status.credentialMismatches = mismatches
        status.secretsLock = ServiceStatus.SecretsLock(isLocked: false, lockAfterIdle: 900, locksIn: 512)
        return status
    }()
}

/// The case of a request, a response and a server message, without their values: the switches
/// are exhaustive, so a new case does not compile until it is named here, and the golden tests
/// then fail until it has a sample.
enum RequestCase: String, CaseIterable {
    case hello, subscribe, follow, snapshot, status, cookieHeader, cookies, setCookies, insertCookies
    case deleteCookies, clearCookies, removeCookiesCreated, listCookies, importCookies, exportCookies
    case policy, setPolicy, credentials, allCredentials, credentialChoice, setCredential, removeCredential
    case setDefaultCredential, password, repairCredentials, beginImport, finishImport
    case saveCredentials, refreshToken, beginTokenRefresh, finishTokenRefresh, unlockSecrets, lockSecrets
    case migrateSecrets

    init(_ request: Request) {
        switch request {
        case .hello: self = .hello
        case .subscribe: self = .subscribe
        case .follow: self = .follow
        case .snapshot: self = .snapshot
        case .status: self = .status
        case .cookieHeader: self = .cookieHeader
        case .cookies: self = .cookies
        case .setCookies: self = .setCookies
        case .insertCookies: self = .insertCookies
        case .deleteCookies: self = .deleteCookies
        case .clearCookies: self = .clearCookies
        case .removeCookiesCreated: self = .removeCookiesCreated
        case .listCookies: self = .listCookies
        case .importCookies: self = .importCookies
        case .exportCookies: self = .exportCookies
        case .policy: self = .policy
        case .setPolicy: self = .setPolicy
        case .credentials: self = .credentials
        case .allCredentials: self = .allCredentials
        case .credentialChoice: self = .credentialChoice
        case .setCredential: self = .setCredential
        case .removeCredential: self = .removeCredential
        case .setDefaultCredential: self = .setDefaultCredential
        case .password: self = .password
        case .repairCredentials: self = .repairCredentials
        case .beginImport: self = .beginImport
        case .finishImport: self = .finishImport
        case .saveCredentials: self = .saveCredentials
        case .refreshToken: self = .refreshToken
        case .beginTokenRefresh: self = .beginTokenRefresh
        case .finishTokenRefresh: self = .finishTokenRefresh
        case .unlockSecrets: self = .unlockSecrets
        case .migrateSecrets: self = .migrateSecrets
        case .lockSecrets: self = .lockSecrets
        }
    }
}

enum ResponseCase: String, CaseIterable {
    case hello, ok, committed, subscribed, snapshot, status, cookieHeader, cookies, cookieOutcomes
    case importReport, exported, policy, credentials, credentialChoice, password, credentialsRepaired
    case refreshToken, tokenRefresh

    init(_ response: Response) {
        switch response {
        case .hello: self = .hello
        case .ok: self = .ok
        case .committed: self = .committed
        case .subscribed: self = .subscribed
        case .snapshot: self = .snapshot
        case .status: self = .status
        case .cookieHeader: self = .cookieHeader
        case .cookies: self = .cookies
        case .cookieOutcomes: self = .cookieOutcomes
        case .importReport: self = .importReport
        case .exported: self = .exported
        case .policy: self = .policy
        case .credentials: self = .credentials
        case .credentialChoice: self = .credentialChoice
        case .password: self = .password
        case .credentialsRepaired: self = .credentialsRepaired
        case .refreshToken: self = .refreshToken
        case .tokenRefresh: self = .tokenRefresh
        }
    }
}

enum ServerMessageCase: String, CaseIterable {
    case reply, failure, eventCookies, eventPolicy, eventCredentials, snapshot, resynchronise

    init(_ message: ServerMessage) {
        switch message {
        case .reply: self = .reply
        case .failure: self = .failure
        case .event(let event):
            switch event.event {
            case .cookies: self = .eventCookies
            case .policy: self = .eventPolicy
            case .credentials: self = .eventCredentials
            }
        case .snapshot: self = .snapshot
        case .resynchronise: self = .resynchronise
        }
    }
}
