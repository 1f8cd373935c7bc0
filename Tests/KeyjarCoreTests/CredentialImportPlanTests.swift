import KeyjarCore
import Testing

/// What `keyjar credential import` does with each credential, given what is stored.
struct CredentialImportPlanTests {
    let space = ProtectionSpace(host: "example.com", protocol: "https")
    let other = ProtectionSpace(host: "example.com", port: 8443, protocol: "https")

    func candidate(
        _ origin: String,
        _ space: ProtectionSpace,
        _ user: String,
        _ password: String,
        expires: Double? = nil,
        refreshToken: String? = nil
    ) -> CredentialImportCandidate {
        CredentialImportCandidate(
            origin: origin,
            space: space,
            user: user,
            password: password,
            expires: expires,
            refreshToken: refreshToken
        )
    }

    @Test(arguments: [false, true])
    func eachOutcome(replace: Bool) {
        let candidates = [
            candidate("line 1", space, "new", "pw"),
            candidate("line 2", space, "same", "pw"),
            candidate("line 3", space, "differs", "new-pw"),
            candidate("line 4", space, "token", "tok", expires: 2_000, refreshToken: "r2"),
            candidate("line 5", space, "new", "another"),
            candidate("line 6", other, "new", "pw"),
            candidate("line 7", space, "old-token", "tok", expires: 999),
            candidate("line 8", space, "keeps-token", "tok"),
        ]
        let stored: [CredentialImportPlan.Key: StoredCredentialSecrets] = [
            .init(space: space, user: "same"): .init(password: "pw"),
            .init(space: space, user: "differs"): .init(password: "old-pw"),
            .init(space: space, user: "token"): .init(password: "tok", expires: 1_500, refreshToken: "r1"),
            .init(space: space, user: "keeps-token"): .init(password: "tok", expires: 5_000, refreshToken: "r"),
        ]
        let plan = CredentialImportPlan(candidates: candidates, stored: stored, replace: replace, now: 1_000)
        #expect(
            plan.entries.map(\.outcome) == [
                .added, .unchanged, replace ? .updated : .left, .updated, .duplicate(of: "line 1"), .added,
                .expired, .unchanged,
            ]
        )
        #expect(
            plan.entries.filter { $0.write != nil }.map(\.candidate.origin)
                == (replace ? ["line 1", "line 3", "line 4", "line 6"] : ["line 1", "line 4", "line 6"])
        )
        #expect(plan.writes == plan.entries.compactMap(\.write))
        #expect(plan.count { $0 == .added } == 2)
    }

    /// keyjard replaces a record's token fields with the write's and deletes a stored refresh
    /// token the write lacks: an update of the same password must carry what it keeps.
    @Test func anUpdateOfTheSamePasswordKeepsWhatTheSourceLacks() {
        let refresh = TokenRefresh(endpoint: "https://example.com/oauth/token", clientID: "keyjar")
        let stored: [CredentialImportPlan.Key: StoredCredentialSecrets] = [
            .init(space: space, user: "new-expiry"): .init(
                password: "tok",
                expires: 1_500,
                refreshToken: "r",
                tokenRefresh: refresh
            ),
            .init(space: space, user: "same-refresh"): .init(
                password: "tok",
                expires: 1_500,
                refreshToken: "r",
                tokenRefresh: refresh
            ),
            .init(space: space, user: "new-refresh"): .init(
                password: "tok",
                expires: 1_500,
                refreshToken: "r",
                tokenRefresh: refresh
            ),
            .init(space: space, user: "new-password"): .init(
                password: "old",
                expires: 1_500,
                refreshToken: "r",
                tokenRefresh: refresh
            ),
        ]
        let candidates = [
            candidate("line 1", space, "new-expiry", "tok", expires: 3_000),
            candidate("line 2", space, "same-refresh", "tok", expires: 3_000, refreshToken: "r"),
            candidate("line 3", space, "new-refresh", "tok", refreshToken: "r2"),
            candidate("line 4", space, "new-password", "new", expires: 3_000),
        ]
        let plan = CredentialImportPlan(candidates: candidates, stored: stored, replace: true, now: 1_000)
        #expect(plan.entries.map(\.outcome) == [.updated, .updated, .updated, .updated])
        func write(
            _ user: String,
            expires: Double?,
            refreshToken: String?,
            tokenRefresh: TokenRefresh?
        )
            -> CredentialWrite
        {
            let password = user == "new-password" ? "new" : "tok"
            return CredentialWrite(
                space: space,
                user: user,
                password: password,
                expires: expires,
                refreshToken: refreshToken,
                tokenRefresh: tokenRefresh
            )
        }
        #expect(
            plan.writes == [
                // Only the expiry is new: the refresh token and Keyjar's endpoint stay.
                write("new-expiry", expires: 3_000, refreshToken: "r", tokenRefresh: refresh),
                write("same-refresh", expires: 3_000, refreshToken: "r", tokenRefresh: refresh),
                // Another refresh token: the stored expiry stays, the endpoint (recorded for the
                // old refresh token's client) does not.
                write("new-refresh", expires: 1_500, refreshToken: "r2", tokenRefresh: nil),
                // --replace with a new password: only the source's token fields.
                write("new-password", expires: 3_000, refreshToken: nil, tokenRefresh: nil),
            ]
        )
    }

    @Test func descriptionsHideSecrets() {
        let entry = candidate("line 1", space, "alice", "hunter2", expires: 5, refreshToken: "refresh-secret")
        let stored = StoredCredentialSecrets(
            password: "hunter2",
            refreshToken: "refresh-secret",
            tokenRefresh: TokenRefresh(endpoint: "https://example.com/token")
        )
        let plan = CredentialImportPlan(
            candidates: [candidate("line 1", space, "alice", "hunter2", expires: 5_000, refreshToken: "refresh-2")],
            stored: [.init(space: space, user: "alice"): stored],
            replace: false,
            now: 1_000
        )
        for text in [
            "\(entry)", String(reflecting: entry), "\(stored)", String(reflecting: stored), "\(plan.writes)",
            String(reflecting: plan.entries),
        ] {
            #expect(!text.contains("hunter2") && !text.contains("refresh-secret") && !text.contains("refresh-2"))
        }
    }
}
