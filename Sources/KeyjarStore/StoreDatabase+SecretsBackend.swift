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
        try withWriter { connection in try Self.backend(in: "secrets_backend", connection) }
    }

    /// The store a migration left copies of secrets in, to remove (``switchSecretsBackend(to:leaving:)``).
    public func secretsLeftBehind() throws -> SecretsBackend? {
        try withWriter { connection in try Self.backend(in: "secrets_left_behind", connection) }
    }

    /// Records `backend` as where the passwords are and `previous` as holding copies to remove,
    /// in one transaction: a migration's switch.
    public func switchSecretsBackend(to backend: SecretsBackend, leaving previous: SecretsBackend) throws {
        try withWriter { connection in
            try connection.transaction {
                try Self.record(backend, in: "secrets_backend", id: 1, connection)
                try Self.record(previous, in: "secrets_left_behind", id: 2, connection)
            }
        }
    }

    /// The copies left behind are removed.
    public func forgetSecretsLeftBehind() throws {
        try withWriter { connection in try connection.execute("DELETE FROM secrets_left_behind") }
    }

    private static func backend(in table: String, _ connection: SQLiteConnection) throws -> SecretsBackend? {
        let statement = try connection.statement("SELECT kind, path FROM \(table)")
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

    private static func record(
        _ backend: SecretsBackend,
        in table: String,
        id: Int64,
        _ connection: SQLiteConnection
    ) throws {
        let (kind, path): (String, String?) =
            switch backend {
            case .secretService: ("secret-service", nil)
            case .encrypted(let path): ("encrypted", path)
            case .file(let path): ("file", path)
            }
        try connection.statement("INSERT OR REPLACE INTO \(table) (id, kind, path) VALUES (?, ?, ?)")
            .bind(.integer(id), .text(kind), .optional(path)).run()
    }

    /// Records `backend` as where the passwords are, replacing the record.
    public func recordSecretsBackend(_ backend: SecretsBackend) throws {
        try withWriter { connection in try Self.record(backend, in: "secrets_backend", id: 1, connection) }
    }
}
