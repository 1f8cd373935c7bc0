import Glibc

/// Where the XDG Base Directory Specification puts a user's files, by one rule for every module:
/// a variable counts when it is set, not empty, and an absolute path (the specification: "If an
/// implementation encounters a relative path in any of these variables it should consider the
/// path invalid and ignore it"); otherwise the default under the home directory.
///
/// ```swift
/// let directories = XDGDirectories()                        // this process's environment
/// directories.dataHome                                      // $XDG_DATA_HOME or ~/.local/share
/// XDGDirectories(environment: ["HOME": "/h"]).cacheHome     // "/h/.cache"
/// ```
package struct XDGDirectories: Sendable {
    private let environment: [String: String]?

    /// The directories of `environment`, or of this process's environment (read at each use).
    package init(environment: [String: String]? = nil) {
        self.environment = environment
    }

    /// A variable's value when it is a usable directory: set, not empty, absolute.
    package func directory(_ name: String) -> String? {
        guard let value = variable(name), value.hasPrefix("/") else { return nil }
        return value
    }

    /// A variable of the environment, as set.
    package func variable(_ name: String) -> String? {
        if let environment { return environment[name] }
        return getenv(name).map { String(cString: $0) }
    }

    /// `$HOME` when usable, else the home directory the password database names for this user.
    package var home: String {
        directory("HOME") ?? Self.passwordDatabaseHome() ?? "/"
    }

    /// `$XDG_DATA_HOME`, else `~/.local/share`.
    package var dataHome: String { directory("XDG_DATA_HOME") ?? home + "/.local/share" }

    /// `$XDG_CONFIG_HOME`, else `~/.config`.
    package var configHome: String { directory("XDG_CONFIG_HOME") ?? home + "/.config" }

    /// `$XDG_STATE_HOME`, else `~/.local/state`.
    package var stateHome: String { directory("XDG_STATE_HOME") ?? home + "/.local/state" }

    /// `$XDG_CACHE_HOME`, else `~/.cache`.
    package var cacheHome: String { directory("XDG_CACHE_HOME") ?? home + "/.cache" }

    /// `$XDG_RUNTIME_DIR`, which has no default: nil when unset (cron, `su`, ssh without
    /// pam_systemd), and the caller decides what stands in for it.
    package var runtimeDirectory: String? { directory("XDG_RUNTIME_DIR") }

    /// `$XDG_DATA_DIRS`' absolute entries, else `/usr/local/share` and `/usr/share`.
    package var dataDirectories: [String] {
        let value = environment.map { $0["XDG_DATA_DIRS"] } ?? getenv("XDG_DATA_DIRS").map { String(cString: $0) }
        let listed = value?.split(separator: ":").map(String.init).filter { $0.hasPrefix("/") } ?? []
        return listed.isEmpty ? ["/usr/local/share", "/usr/share"] : listed
    }

    private static func passwordDatabaseHome() -> String? {
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 4096)
        guard getpwuid_r(geteuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil,
            let directory = entry.pw_dir
        else { return nil }
        return String(cString: directory)
    }
}

/// Where the D-Bus session bus is, by GLib's rule: `DBUS_SESSION_BUS_ADDRESS`, else the socket
/// `$XDG_RUNTIME_DIR/bus`. Checked before any libsecret call because, without either, GLib falls
/// back to X11 autolaunch, whose failure message does not say that the real problem is a
/// missing Secret Service.
package enum SessionBus {
    /// Why no session bus can be reached, or nil if one may be.
    package static func problem(in directories: XDGDirectories = XDGDirectories()) -> String? {
        if let address = directories.variable("DBUS_SESSION_BUS_ADDRESS"), !address.isEmpty { return nil }
        guard let runtime = directories.runtimeDirectory else {
            return "neither DBUS_SESSION_BUS_ADDRESS nor XDG_RUNTIME_DIR is set"
        }
        var info = stat()
        if stat(runtime + "/bus", &info) == 0, info.st_mode & S_IFMT == S_IFSOCK { return nil }
        return "DBUS_SESSION_BUS_ADDRESS is not set and there is no session bus socket at \(runtime)/bus"
    }
}
