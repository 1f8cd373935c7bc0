import KeyjarCore
import KeyjarTestSupport
import Testing

/// The one matching rule: which stored credentials answer a challenge's space, in what order,
/// and which answers without asking.
struct CredentialChoiceTests {
    typealias Method = ProtectionSpace.AuthenticationMethod

    private func space(
        realm: String? = nil,
        _ method: Method = .default,
        host: String = "example.com",
        port: Int? = nil,
        scheme: String = "https",
        proxy: ProtectionSpace.ProxyType = .none
    ) -> ProtectionSpace {
        ProtectionSpace(
            host: host,
            port: port,
            protocol: scheme,
            realm: realm,
            authenticationMethod: method,
            proxyType: proxy
        )
    }

    private func record(
        _ user: String,
        _ space: ProtectionSpace,
        isDefault: Bool = true,
        used: Double = 0
    ) -> CredentialRecord {
        CredentialRecord(space: space, user: user, persistence: .permanent, isDefault: isDefault, created: used)
    }

    // MARK: The four tiers

    /// Each row: a stored space, and the tier it falls in for a Basic challenge of realm "Team".
    @Test(arguments: [
        (realm: "Team" as String?, method: Method.httpBasic, expected: CredentialChoice.Specificity?.some(.exactSpace)),
        ("Team", .default, .sameRealmAnyMethod),
        (nil, .httpBasic, .anyRealmSameMethod),
        (nil, .default, .anyRealmAnyMethod),
        ("Other", .httpBasic, nil),
        ("Other", .default, nil),
        ("Team", .httpDigest, nil),
        (nil, .httpDigest, nil),
        ("Team", .htmlForm, nil),
        (nil, .clientCertificate, nil),
        (nil, .serverTrust, nil),
    ])
    func eachStoredSpaceFallsInItsTier(realm: String?, method: Method, expected: CredentialChoice.Specificity?) {
        let challenge = space(realm: "Team", .httpBasic)
        #expect(CredentialChoice.specificity(of: space(realm: realm, method), for: challenge) == expected)
    }

    @Test func theMostSpecificDefaultWinsAndEveryTierIsOrdered() {
        let challenge = space(realm: "Team", .httpBasic)
        let stored = [
            record("dora", space(realm: nil, .default)),
            record("carol", space(realm: nil, .httpBasic)),
            record("bob", space(realm: "Team", .default)),
            record("alice", space(realm: "Team", .httpBasic)),
        ]
        // Given every tier filled, each by another user (and in reverse order),
        // When the challenge's space is looked up,
        let choice = CredentialChoice(for: challenge, among: stored)
        // Then the candidates come most specific first and the exact space's default answers.
        #expect(choice.candidates.map(\.record.user) == ["alice", "bob", "carol", "dora"])
        #expect(
            choice.candidates.map(\.specificity) == [
                .exactSpace, .sameRealmAnyMethod, .anyRealmSameMethod, .anyRealmAnyMethod,
            ]
        )
        #expect(choice.preferred?.user == "alice")

        // Without the exact space, the next tier's default answers, and so on down.
        for dropped in 1...3 {
            let rest = CredentialChoice(for: challenge, among: stored.dropLast(dropped))
            #expect(rest.preferred?.user == ["bob", "carol", "dora"][dropped - 1])
        }
    }

    @Test func aCredentialStoredPerServerAnswersEveryHTTPMethodButNeverFormsOrTLS() {
        let perServer = record("alice", space())
        for method in [Method.httpBasic, .httpDigest, .ntlm, .negotiate] {
            let choice = CredentialChoice(
                for: space(realm: method == .ntlm ? nil : "Any Realm", method),
                among: [perServer]
            )
            #expect(choice.preferred?.user == "alice", "\(method)")
        }
        for method in [Method.htmlForm, .clientCertificate, .serverTrust] {
            let choice = CredentialChoice(for: space(realm: nil, method), among: [perServer])
            #expect(choice.candidates.isEmpty, "\(method)")
            #expect(choice.preferred == nil)
        }
    }

    @Test func anotherOriginNeverMatches() {
        let challenge = space(realm: "Team", .httpBasic)
        let elsewhere = [
            record("a", space(host: "other.example")),
            record("b", space(port: 8443)),
            record("c", space(scheme: "http")),
            record("d", space(proxy: .http)),
        ]
        #expect(CredentialChoice(for: challenge, among: elsewhere).candidates.isEmpty)
    }

    @Test func aProxyChallengeFindsTheProxysCredentials() {
        let proxy = ProtectionSpace(host: "proxy.example", port: 3128, protocol: "http", proxyType: .http)
        let challenge = ProtectionSpace(
            host: "proxy.example",
            port: 3128,
            protocol: "http",
            realm: "Squid",
            authenticationMethod: .httpBasic,
            proxyType: .http
        )
        let server = ProtectionSpace(host: "proxy.example", port: 3128, protocol: "http")
        let choice = CredentialChoice(for: challenge, among: [record("srv", server), record("px", proxy)])
        #expect(choice.candidates.map(\.record.user) == ["px"])
        #expect(choice.preferred?.user == "px")
    }

    // MARK: Who answers without asking

    @Test func severalUsersAndNoDefaultAskTheDelegateProposingTheMostSpecific() {
        let challenge = space(realm: "Team", .httpBasic)
        let stored = [
            record("bob", space(realm: nil, .default), isDefault: false, used: 50),
            record("alice", space(realm: "Team", .default), isDefault: false, used: 10),
        ]
        let choice = CredentialChoice(for: challenge, among: stored)
        #expect(choice.preferred == nil)
        #expect(choice.proposed?.user == "alice")
    }

    @Test func oneUserWithoutADefaultAnswers() {
        let stored = [record("alice", space(realm: nil, .default), isDefault: false)]
        #expect(CredentialChoice(for: space(realm: "Team", .httpBasic), among: stored).preferred?.user == "alice")
    }

    @Test func aUserAppearsOnceAtTheirMostSpecificTier() {
        let stored = [
            record("alice", space(realm: nil, .default), isDefault: true),
            record("alice", space(realm: "Team", .httpBasic), isDefault: true),
        ]
        let choice = CredentialChoice(for: space(realm: "Team", .httpBasic), among: stored)
        #expect(choice.candidates.count == 1)
        #expect(choice.candidates.first?.specificity == .exactSpace)
        #expect(choice.candidates.first?.record.space.realm == "Team")
    }

    @Test func withinATierTheDefaultThenTheMostRecentlyUsedComeFirst() {
        let shared = space(realm: nil, .default)
        let stored = [
            record("old", shared, isDefault: false, used: 1),
            record("recent", shared, isDefault: false, used: 9),
            record("chosen", shared, isDefault: true, used: 0),
        ]
        let choice = CredentialChoice(for: space(realm: "R", .httpDigest), among: stored)
        #expect(choice.candidates.map(\.record.user) == ["chosen", "recent", "old"])
        #expect(choice.preferred?.user == "chosen")
    }

    // MARK: A lookup that names no challenge

    @Test func aServerLevelLookupAlsoFindsCredentialsStoredUnderARealm() {
        // git without `wwwauth[]`: it knows the server only.
        let stored = [
            record("realmUser", space(realm: "Team", .httpBasic), used: 5),
            record("generic", space(realm: nil, .default), isDefault: false, used: 1),
            record("form", space(realm: nil, .htmlForm)),
        ]
        let choice = CredentialChoice(for: space(), among: stored)
        #expect(choice.candidates.map(\.record.user) == ["generic", "realmUser"])
        #expect(choice.candidates.map(\.specificity) == [.exactSpace, .otherSpaceOfOrigin])
        // "generic" is no default; "realmUser" is its own space's default.
        #expect(choice.preferred?.user == "realmUser")
    }

    // MARK: The first credential of a space becomes its default

    @Test func theFirstCredentialOfASpaceBecomesItsDefault() {
        let team = space(realm: "Team", .httpBasic)
        let alice = record("alice", team, isDefault: false)
        #expect(alice.becomesDefault(asked: false, stored: []))
        #expect(alice.becomesDefault(asked: false, stored: [record("other", space(realm: nil))]))
        #expect(!alice.becomesDefault(asked: false, stored: [record("bob", team, isDefault: true)]))
        #expect(alice.becomesDefault(asked: true, stored: [record("bob", team, isDefault: true)]))
        // Saving the default again keeps it the default.
        #expect(
            alice.becomesDefault(
                asked: false,
                stored: [record("alice", team, isDefault: true), record("bob", team, isDefault: false)]
            )
        )
        // A space whose default was removed gets the next one saved as default.
        #expect(alice.becomesDefault(asked: false, stored: [record("bob", team, isDefault: false)]))
    }

    // MARK: Tokens

    @Test func anExpiredOrRevokedCredentialIsNeverACandidate() {
        let challenge = space(realm: "Team", .httpBasic)
        var expired = record("expired", space(realm: "Team", .httpBasic))
        expired.expires = 1_000
        var revoked = record("revoked", space(realm: "Team", .httpBasic))
        revoked.isRevoked = true
        var current = record("current", space(realm: nil, .default), isDefault: false)
        current.expires = 2_000
        // At 1,500 only the unexpired one is offered, however specific the others are.
        let choice = CredentialChoice(for: challenge, among: [expired, revoked, current], now: 1_500)
        #expect(choice.candidates.map(\.record.user) == ["current"])
        #expect(choice.preferred?.user == "current")
        // At its own expiry it is gone too: `expires` is the first instant it no longer works.
        #expect(CredentialChoice(for: challenge, among: [current], now: 2_000).candidates.isEmpty)
        #expect(expired.isExpired(at: 1_000) && !expired.isExpired(at: 999.5))
    }

    @Test func aBearerChallengeIsAnsweredOnlyByATokenStoredForBearer() {
        let challenge = space(realm: "api", .httpBearer)
        let password = record("password", space(realm: nil, .default))
        let realmPassword = record("realmPassword", space(realm: "api", .default))
        let token = record("", space(realm: nil, .httpBearer))
        // A password stored for any method is not a token; the token stored without a realm is.
        let choice = CredentialChoice(for: challenge, among: [password, realmPassword, token])
        #expect(choice.candidates.map(\.record.user) == [""])
        #expect(choice.candidates.map(\.specificity) == [.anyRealmSameMethod])
        // ...and a token never answers a Basic challenge.
        #expect(CredentialChoice(for: space(realm: "api", .httpBasic), among: [token]).candidates.isEmpty)
        // A lookup that names no challenge (git's) does see it, last.
        #expect(CredentialChoice(for: space(), among: [token]).candidates.map(\.specificity) == [.otherSpaceOfOrigin])
    }

    @Test func aNetrcMachineAnswersEverySchemeAndPortOfItsHostBelowTheOrigin() {
        let machine = record("netrc", ProtectionSpace(anySchemeAndPortOf: "Example.COM"))
        let everyServer = record("default", .anyServer)
        let origin = record("origin", space(realm: nil, .default, port: 8443), isDefault: false)
        let challenge = space(realm: "Team", .httpDigest, port: 8443)
        // On the origin: its own credential first, then the host's, then every server's.
        let choice = CredentialChoice(for: challenge, among: [everyServer, machine, origin])
        #expect(choice.candidates.map(\.record.user) == ["origin", "netrc", "default"])
        #expect(choice.candidates.map(\.specificity) == [.anyRealmAnyMethod, .anySchemeAndPort, .anyServer])
        // Any encrypted scheme and port of that host, and a lookup naming no challenge.
        for other in [space(realm: nil, .httpBasic, port: 990, scheme: "ftps"), space(port: 8443), space()] {
            #expect(CredentialChoice(for: other, among: [machine]).preferred?.user == "netrc")
        }
        // Never another host (but for `default`), a proxy, a Bearer challenge or a certificate.
        #expect(CredentialChoice(for: space(.httpBasic, host: "example.org"), among: [machine]).candidates.isEmpty)
        #expect(
            CredentialChoice(for: space(.httpBasic, host: "example.org"), among: [everyServer]).preferred?.user
                == "default"
        )
        for refused in [
            space(.httpBasic, scheme: "http", proxy: .http), space(.httpBearer), space(.clientCertificate),
            space(.serverTrust),
        ] {
            #expect(CredentialChoice(for: refused, among: [machine, everyServer]).candidates.isEmpty)
        }
        #expect(machine.space.isWildcard && machine.space.host == "example.com" && machine.space.port == 0)
    }

    /// A login for every scheme goes over an unencrypted scheme only to this machine, unless
    /// it was imported to go in clear too: an http link or redirect must not read it off the
    /// network.
    @Test func aNetrcLoginGoesInClearOnlyToThisMachineUnlessAskedTo() {
        let machine = record("netrc", ProtectionSpace(anySchemeAndPortOf: "example.com"))
        let everyServer = record("default", .anyServer)
        let unencrypted = [
            space(.httpBasic, port: 8080, scheme: "http"), space(scheme: "http"),
            space(.httpBasic, port: 21, scheme: "ftp"),
            space(.httpDigest, scheme: "http"),
        ]
        for wanted in unencrypted {
            #expect(CredentialChoice(for: wanted, among: [machine, everyServer]).candidates.isEmpty, "\(wanted)")
        }
        for host in ["127.0.0.1", "localhost", "::1"] {
            let local = record("local", ProtectionSpace(anySchemeAndPortOf: host))
            let wanted = space(.httpBasic, host: host, port: 8080, scheme: "http")
            #expect(
                CredentialChoice(for: wanted, among: [local, everyServer]).candidates.map(\.record.user) == [
                    "local", "default",
                ]
            )
        }
        #expect(
            CredentialChoice(for: space(.httpBasic, host: "127.attacker.example", scheme: "http"), among: [everyServer])
                .candidates.isEmpty
        )
        // Asked for at import: in clear too
        let clear = record("clear", ProtectionSpace(anySchemeAndPortOf: "example.com", inClearToo: true))
        let clearEverywhere = record("clear-default", .anyServer(inClearToo: true))
        #expect(clear.space.isWildcard && clear.space.goesInClearToo && clearEverywhere.space.isEveryServer)
        for wanted in unencrypted {
            #expect(
                CredentialChoice(for: wanted, among: [machine, everyServer, clear, clearEverywhere]).candidates
                    .map(\.record.user) == ["clear", "clear-default"],
                "\(wanted)"
            )
        }
    }

    @Test func aServersOwnCredentialsComeBeforeANetrcLoginAndNothingIsStoredInOne() {
        let machine = record("alice", ProtectionSpace(anySchemeAndPortOf: "example.com"))
        let realmOnly = record("alice", space(realm: "Team", .httpBasic), isDefault: false)
        // A lookup naming no challenge (git's): the server's own realm credential first.
        let choice = CredentialChoice(for: space(), among: [machine, realmOnly])
        #expect(choice.candidates.map(\.specificity) == [.otherSpaceOfOrigin])
        #expect(choice.candidates.first?.record.space.realm == "Team")
        // Where a new password of alice for a Digest challenge goes: not into the wildcard
        // (every scheme and port would get this server's password), into the challenge's space.
        let digest = space(realm: "Other", .httpDigest)
        let candidates = CredentialChoice(for: digest, among: [machine])
        #expect(candidates.preferred?.space.isWildcard == true)
        let stored = CredentialCandidates(records: candidates.candidates.map(\.record), preferred: candidates.preferred)
        #expect(stored.space(forStoring: "alice", challengedAt: digest) == digest)
    }
}
