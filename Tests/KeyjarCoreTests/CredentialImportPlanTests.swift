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
            plan.writes.map(\.origin)
                == (replace ? ["line 1", "line 3", "line 4", "line 6"] : ["line 1", "line 4", "line 6"])
        )
        #expect(plan.count { $0 == .added } == 2)
    }

    @Test func descriptionsHideSecrets() {
        let entry = candidate("line 1", space, "alice", "hunter2", expires: 5, refreshToken: "refresh-secret")
        let stored = StoredCredentialSecrets(password: "hunter2", refreshToken: "refresh-secret")
        for text in ["\(entry)", String(reflecting: entry), "\(stored)", String(reflecting: stored)] {
            #expect(!text.contains("hunter2") && !text.contains("refresh-secret"))
        }
    }
}
