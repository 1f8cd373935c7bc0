import KeyjarSQLite

// Where the database's passwords are: recorded at keyjard's first start and read at every
// start after (KeyjarServer's SecretsBackendChoice decides; this is only its record).
extension StoreDatabase {
    /// A secret store, as the database records it.
    public enum SecretsBackend: Sendable, Hashable, CustomStringConvertible {
        case secretService
        case encrypted(path: String)
        case file(path: String)

        /// As `--secrets` names it, with the file.
        public var description: String {
            switch self {
            case .secretService: "secret-service"
            case .encrypted(let path): "encrypted (\(path))"
            case .file(let path): "file (\(path))"
            }
        }
    }

    /// The recorded secret store; nil before the first start that recorded one.
    public func secretsBackend() throws -> SecretsBackend? {
        try withWriter { connection in
            let statement = try connection.statement("SELECT kind, path FROM secrets_backend WHERE id = 1")
            guard try statement.step() else { return nil }
            let path = statement.isNull(1) ? nil : statement.text(1)
            switch (statement.text(0), path) {
            case ("secret-service", nil): return .secretService
            case ("encrypted", let path?): return .encrypted(path: path)
            case ("file", let path?): return .file(path: path)
            case (let kind, _):
                throw StoreError(
                    code: .database,
                    message: "the recorded secrets backend '\(kind)' is not one keyjard knows"
                )
            }
        }
    }

    /// Records `backend` as where the passwords are, replacing the record.
    public func recordSecretsBackend(_ backend: SecretsBackend) throws {
        let (kind, path): (String, String?) =
            switch backend {
            case .secretService: ("secret-service", nil)
            case .encrypted(let path): ("encrypted", path)
            case .file(let path): ("file", path)
            }
        try withWriter { connection in
            try connection.statement("INSERT OR REPLACE INTO secrets_backend (id, kind, path) VALUES (1, ?, ?)")
                .bind(.text(kind), .optional(path)).run()
        }
    }
}
