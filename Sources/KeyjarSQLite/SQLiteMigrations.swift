/// A schema's history: steps only ever appended, each run in its own transaction that also sets
/// `PRAGMA user_version` to its number. The store and the response cache's index each own one.
package struct SQLiteMigrations: Sendable {
    package var steps: [(version: Int64, sql: String)]

    package init(_ steps: [(version: Int64, sql: String)]) {
        self.steps = steps
    }

    /// The version the last step leaves.
    package var latest: Int64 { steps.last?.version ?? 0 }

    /// What a database says about itself before any step runs.
    package enum Start: Equatable, Sendable {
        /// At `version`, which these steps know: the later ones will run.
        case known(version: Int64)
        /// Written by a newer program (`version` > ``latest``): leave it untouched.
        case future(version: Int64)
    }

    package func start(of connection: SQLiteConnection) throws -> Start {
        let current = try connection.integerPragma("user_version")
        return current > latest ? .future(version: current) : .known(version: current)
    }

    /// Runs the steps after the database's version, in order; a failed step leaves the database
    /// at the version before it. Each step reads the version inside its own write transaction:
    /// processes that open an old database at once (every process of an application opens its
    /// response cache) must neither run a step another has just run (its column would exist)
    /// nor write its version back over a later one's.
    package func apply(to connection: SQLiteConnection) throws {
        for step in steps {
            try connection.transaction {
                guard try connection.integerPragma("user_version") < step.version else { return }
                try connection.execute(step.sql)
                try connection.execute("PRAGMA user_version = \(step.version)")
            }
        }
    }
}
