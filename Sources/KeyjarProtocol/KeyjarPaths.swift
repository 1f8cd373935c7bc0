public import FoundationEssentials
import Glibc
import KeyjarPlatform

/// Where keyjard's socket and database live by default, shared by keyjard and its clients.
///
/// - Socket: `$KEYJAR_SOCKET`, else `$XDG_RUNTIME_DIR/keyjar/keyjar.sock`, else (cron, `su`,
///   ssh without pam_systemd) the login's runtime directory all the same,
///   `/run/user/<uid>/keyjar/keyjar.sock`, when it is there and the user's alone (nobody else can
///   make it), else `/tmp/keyjar-<uid>/keyjar.sock` (a 0700 directory that must belong to the
///   user: keyjard and every client refuse one another user made).
/// - Database: `$KEYJAR_DATABASE`, else `$XDG_DATA_HOME/keyjar/store.sqlite3`, else
///   `~/.local/share/keyjar/store.sqlite3`.
public enum KeyjarPaths {
    public static func defaultSocketPath(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        loginRuntimeDirectory: String? = nil
    ) -> String {
        if let explicit = environment["KEYJAR_SOCKET"], !explicit.isEmpty { return absolute(explicit) }
        if let runtime = XDGDirectories(environment: environment).runtimeDirectory {
            return runtime + "/keyjar/keyjar.sock"
        }
        let login = loginRuntimeDirectory ?? "/run/user/\(geteuid())"
        if PrivateDirectory.problem(with: login) == nil { return login + "/keyjar/keyjar.sock" }
        return "/tmp/keyjar-\(geteuid())/keyjar.sock"
    }

    /// Beside the database, which keyjard serves it and where (``DatabasePointer``).
    public static func databasePointer(forDatabase databasePath: String) -> String { databasePath + ".keyjard" }

    public static func defaultDatabasePath(
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if let explicit = environment["KEYJAR_DATABASE"], !explicit.isEmpty { return absolute(explicit) }
        return XDGDirectories(environment: environment).dataHome + "/keyjar/store.sqlite3"
    }

    /// A path a user gave, resolved against the working directory. A relative socket path
    /// would otherwise mean something else to an auto-started keyjard (which runs in `/`) and
    /// to every later client started elsewhere.
    public static func absolute(
        _ path: String,
        workingDirectory: String = FileManager.default.currentDirectoryPath
    ) -> String {
        guard !path.hasPrefix("/"), !path.isEmpty else { return path }
        let expanded = PathName.expandingTilde(path)
        if expanded.hasPrefix("/") { return expanded }
        return URL(fileURLWithPath: expanded, relativeTo: URL(fileURLWithPath: workingDirectory, isDirectory: true))
            .standardizedFileURL.path
    }
}
