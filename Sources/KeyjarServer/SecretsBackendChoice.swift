import KeyjarStore

/// Where keyjard keeps passwords, decided at each start from what it was asked, what the
/// database records, and — only at the first start of a database that holds no password yet —
/// what the machine offers. A rule without I/O (tested on its own); KeyjarServer gathers the
/// facts and records the outcome.
///
/// - Asked for nothing (`--secrets` and `KEYJAR_SECRETS` unset): the recorded store. Without a
///   record, a store already in use beside the database (its file there, or credentials in a
///   database from before the record, whose passwords are in the Secret Service, the default
///   then); else the Secret Service where it offers an open collection, or a locked or missing
///   one on a desktop that can prompt; else the encrypted file.
/// - Asked for a store on the command line (`--secrets`, a deliberate act of whoever starts
///   keyjard): that one, recorded, with a warning when credentials stored before have their
///   passwords in another.
/// - Asked for a store by `KEYJAR_SECRETS`, which reaches a keyjard auto-started from any
///   shell: that one while nothing contradicts it; but when the database holds credentials
///   whose passwords the record puts elsewhere, the record, with a warning. Two shells that
///   see different environments must not split one store.
struct SecretsBackendChoice: Sendable, Equatable {
    typealias Backend = StoreDatabase.SecretsBackend

    /// `--secrets`, or `KEYJAR_SECRETS` when `askedByEnvironment`; nil: choose.
    var asked: Backend?
    var askedByEnvironment = false
    var recorded: Backend?
    /// Credentials the database holds.
    var credentialCount: Int
    /// The encrypted and the plain file keyjard would use (beside the database, or
    /// `--secrets-file`), and whether each exists.
    var encryptedFile: String
    var encryptedFileExists: Bool
    var plainFile: String
    var plainFileExists: Bool
    /// `DISPLAY` or `WAYLAND_DISPLAY` is set: a Secret Service can prompt to unlock or create.
    var hasDisplay: Bool

    struct Outcome: Equatable {
        var backend: Backend
        /// A new choice, to record.
        var record: Bool
        /// Logged with the choice.
        var why: String
        /// What the user should know (logged as a warning): a store asked for was not used, or
        /// credentials are left with their passwords in another store.
        var warning: String?
    }

    /// The outcome; `offer` (a D-Bus round trip) is asked only when nothing else decides.
    func decide(offer: () -> LibSecretStore.Offer) -> Outcome {
        let askedBy = askedByEnvironment ? "KEYJAR_SECRETS" : "--secrets"
        if let asked {
            guard let recorded, recorded != asked else {
                return Outcome(backend: asked, record: recorded == nil, why: "as \(askedBy) asks")
            }
            guard credentialCount > 0 else {
                return Outcome(backend: asked, record: true, why: "as \(askedBy) asks, instead of \(recorded)")
            }
            if askedByEnvironment {
                return Outcome(
                    backend: recorded,
                    record: false,
                    why: "recorded in the database",
                    warning: "KEYJAR_SECRETS asks for \(asked), but the passwords of this database's "
                        + "\(credentialCount) credential(s) are in \(recorded): keyjard keeps to \(recorded). "
                        + "To move to \(asked), start keyjard once with --secrets (docs/operations.md)"
                )
            }
            return Outcome(
                backend: asked,
                record: true,
                why: "as --secrets asks, instead of \(recorded)",
                warning: "the passwords of the \(credentialCount) credential(s) stored before are in \(recorded), "
                    + "not in \(asked): `keyjar status` lists them without their password until they are "
                    + "carried over (docs/operations.md, \"Changing the secrets backend\")"
            )
        }
        if let recorded { return Outcome(backend: recorded, record: false, why: "recorded in the database") }
        if encryptedFileExists {
            return Outcome(backend: .encrypted(path: encryptedFile), record: true, why: "its encrypted file is there")
        }
        if plainFileExists {
            return Outcome(backend: .file(path: plainFile), record: true, why: "its plain file is there")
        }
        if credentialCount > 0 {
            return Outcome(
                backend: .secretService,
                record: true,
                why: "its credentials were stored there (the default before)"
            )
        }
        switch offer() {
        case .unlockedCollection:
            return Outcome(backend: .secretService, record: true, why: "the Secret Service has an open collection")
        case .lockedCollection where hasDisplay, .noCollection where hasDisplay:
            return Outcome(
                backend: .secretService,
                record: true,
                why: "the Secret Service can ask on this desktop to open one"
            )
        case .lockedCollection, .noCollection:
            return Outcome(
                backend: .encrypted(path: encryptedFile),
                record: true,
                why: "the Secret Service has no open collection and no desktop to ask on"
            )
        case .unreachable(let reason):
            return Outcome(backend: .encrypted(path: encryptedFile), record: true, why: "no Secret Service: \(reason)")
        }
    }
}

extension StoreDatabase.SecretsBackend {
    init(_ secrets: ServerConfiguration.Secrets) {
        switch secrets {
        case .secretService: self = .secretService
        case .encrypted(let path): self = .encrypted(path: path)
        case .file(let path): self = .file(path: path)
        }
    }
}

extension ServerConfiguration.Secrets {
    init(_ backend: StoreDatabase.SecretsBackend) {
        switch backend {
        case .secretService: self = .secretService
        case .encrypted(let path): self = .encrypted(path: path)
        case .file(let path): self = .file(path: path)
        }
    }
}
