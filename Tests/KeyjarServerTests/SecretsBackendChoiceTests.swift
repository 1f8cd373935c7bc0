import KeyjarStore
import Testing

@testable import KeyjarServer

/// Where keyjard puts passwords, decided from facts given here: no bus, no file, no database.
@Suite struct SecretsBackendChoiceRuleTests {
    private let fresh = SecretsBackendChoice(
        asked: nil,
        recorded: nil,
        credentialCount: 0,
        encryptedFile: "/d/secrets.sealed",
        encryptedFileExists: false,
        plainFile: "/d/secrets.json",
        plainFileExists: false,
        hasDisplay: false
    )

    private func chosen(_ choice: SecretsBackendChoice, offer: LibSecretStore.Offer) -> StoreDatabase.SecretsBackend {
        choice.decide(offer: { offer }).backend
    }

    @Test func aFreshDatabaseTakesWhatTheMachineOffers() {
        var desktop = fresh
        desktop.hasDisplay = true
        #expect(chosen(fresh, offer: .unlockedCollection) == .secretService)
        #expect(chosen(fresh, offer: .lockedCollection) == .encrypted(path: "/d/secrets.sealed"))
        #expect(chosen(desktop, offer: .lockedCollection) == .secretService)
        #expect(chosen(fresh, offer: .noCollection) == .encrypted(path: "/d/secrets.sealed"))
        #expect(chosen(desktop, offer: .noCollection) == .secretService)
        #expect(chosen(fresh, offer: .unreachable("no bus")) == .encrypted(path: "/d/secrets.sealed"))
        #expect(chosen(desktop, offer: .unreachable("no bus")) == .encrypted(path: "/d/secrets.sealed"))
        let outcome = fresh.decide(offer: { .unreachable("no bus") })
        #expect(outcome.record && outcome.warning == nil)
    }

    @Test func aRecordOrAStoreInUseIsKeptAndTheMachineIsNotAsked() {
        var recorded = fresh
        recorded.recorded = .file(path: "/elsewhere/secrets.json")
        let kept = recorded.decide(offer: { fatalError("the Secret Service was asked") })
        #expect(kept.backend == .file(path: "/elsewhere/secrets.json") && !kept.record && kept.warning == nil)
        var sealed = fresh
        sealed.encryptedFileExists = true
        sealed.plainFileExists = true
        #expect(chosen(sealed, offer: .unlockedCollection) == .encrypted(path: "/d/secrets.sealed"))
        var plain = fresh
        plain.plainFileExists = true
        #expect(chosen(plain, offer: .unlockedCollection) == .file(path: "/d/secrets.json"))
        // Credentials from before the record: the Secret Service was the only default.
        var older = fresh
        older.credentialCount = 3
        #expect(chosen(older, offer: .unreachable("no bus")) == .secretService)
    }

    /// Asked on the command line: used and recorded, with a warning when credentials stored
    /// before have their passwords elsewhere. Asked by `KEYJAR_SECRETS`: used unless the
    /// record puts stored credentials' passwords elsewhere.
    @Test func aStoreAskedForIsUsedButTheEnvironmentGivesWayToTheRecord() {
        var asked = fresh
        asked.asked = .file(path: "/d/secrets.json")
        var outcome = asked.decide(offer: { .unlockedCollection })
        #expect(outcome.backend == .file(path: "/d/secrets.json") && outcome.record && outcome.warning == nil)
        asked.recorded = .file(path: "/d/secrets.json")
        asked.credentialCount = 2
        outcome = asked.decide(offer: { .unlockedCollection })
        #expect(outcome.backend == .file(path: "/d/secrets.json") && !outcome.record && outcome.warning == nil)

        asked.recorded = .encrypted(path: "/d/secrets.sealed")
        outcome = asked.decide(offer: { .unlockedCollection })
        #expect(outcome.backend == .file(path: "/d/secrets.json") && outcome.record)
        #expect(outcome.warning?.contains("2 credential(s) stored before are in encrypted (/d/secrets.sealed)") == true)

        asked.askedByEnvironment = true
        outcome = asked.decide(offer: { .unlockedCollection })
        #expect(outcome.backend == .encrypted(path: "/d/secrets.sealed") && !outcome.record)
        #expect(outcome.warning?.hasPrefix("KEYJAR_SECRETS asks for file (/d/secrets.json)") == true, "\(outcome)")
        asked.credentialCount = 0
        outcome = asked.decide(offer: { .unlockedCollection })
        #expect(outcome.backend == .file(path: "/d/secrets.json") && outcome.record && outcome.warning == nil)
    }
}
