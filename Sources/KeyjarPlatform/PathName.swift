import Glibc

/// Path names taken apart and put together as Foundation's `NSString` path methods do, for the
/// modules the `keyjar` front links: they use only FoundationEssentials, which has no
/// `NSString`, so that the front starts without Foundation (docs/performance.md, The command).
package enum PathName {
    /// The directory part of `path` (`deletingLastPathComponent`): trailing slashes ignored,
    /// `/` for a name at the root, empty for a bare name.
    package static func directory(of path: String) -> String {
        var path = Substring(path)
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        guard let slash = path.lastIndex(of: "/") else { return "" }
        var directory = path[..<slash]
        while directory.count > 1, directory.hasSuffix("/") { directory.removeLast() }
        return directory.isEmpty ? "/" : String(directory)
    }

    /// `component` inside `directory` (`appendingPathComponent`), one slash between them.
    package static func appending(_ component: String, to directory: String) -> String {
        guard !directory.isEmpty else { return component }
        guard !component.isEmpty else { return directory }
        return (directory.hasSuffix("/") ? directory : directory + "/") + component.drop { $0 == "/" }
    }

    /// `~` or `~user` at the start of `path` replaced by that home directory, without a
    /// trailing slash (`expandingTildeInPath`); anything else, or a user without a home, as it
    /// is. The user's own home is `$HOME` when set, as a shell expands `~` (Foundation on Linux
    /// reads the password database whatever `$HOME` says).
    package static func expandingTilde(_ path: String) -> String {
        guard path.hasPrefix("~") else { return path }
        let end = path.firstIndex(of: "/") ?? path.endIndex
        let user = String(path[path.index(after: path.startIndex)..<end])
        guard var home = user.isEmpty ? currentHome() : home(of: user), !home.isEmpty else { return path }
        while home.count > 1, home.hasSuffix("/") { home.removeLast() }
        var expanded = home == "/" ? String(path[end...]) : home + path[end...]
        while expanded.count > 1, expanded.hasSuffix("/") { expanded.removeLast() }
        return expanded.isEmpty ? "/" : expanded
    }

    private static func currentHome() -> String? {
        if let home = getenv("HOME"), home.pointee != 0 { return String(cString: home) }
        guard let entry = getpwuid(getuid()), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }

    private static func home(of user: String) -> String? {
        guard let entry = getpwnam(user), let directory = entry.pointee.pw_dir else { return nil }
        return String(cString: directory)
    }
}
