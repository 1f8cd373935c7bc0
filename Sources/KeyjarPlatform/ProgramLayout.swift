import Glibc

/// Where Keyjar's programs find one another, by the layout `scripts/install` makes:
/// `PREFIX/bin` holds what a user runs (`keyjar`, `keyjard`), `PREFIX/libexec/keyjar` what only
/// `keyjar` runs (keyjar-full), off PATH, as git keeps its helpers in `libexec/git-core`. A
/// build tree (`.build/release`) has every program in one directory. The one rule for both
/// lookups that depend on it: the front's hand-over and a client's start of keyjard.
package enum ProgramLayout {
    /// The directory of helpers under an installation prefix.
    package static let helperDirectory = "libexec/keyjar"

    /// The running executable, symbolic links resolved (a `git-credential-keyjar` link is
    /// `keyjar`); nil when /proc is not there. readlink rather than Foundation: the front
    /// links none (a `FileManager` call cost a sixth of a handed-over call).
    package static var runningExecutable: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The directories in which the program `executable` looks for another of Keyjar's programs,
    /// in order: from `PREFIX/bin`, the helpers' directory first, then its own; from the
    /// helpers' directory, its own, then `PREFIX/bin`; from anywhere else (a build tree), its
    /// own only.
    package static func directories(besideExecutable executable: String) -> [String] {
        var directory = PathName.directory(of: executable)
        if directory.isEmpty { directory = "/" }
        let parent = PathName.directory(of: directory)
        if directory.hasSuffix("/" + helperDirectory) {
            let prefix = PathName.directory(of: parent)
            return [directory, PathName.appending("bin", to: prefix)]
        }
        if directory.hasSuffix("/bin") {
            return [PathName.appending(helperDirectory, to: parent), directory]
        }
        return [directory]
    }

    /// Where `name` is looked for beside the running executable, in order (see
    /// ``directories(besideExecutable:)``); only `/name` when the executable is unknown.
    package static func candidates(for name: String) -> [String] {
        let searched = runningExecutable.map { directories(besideExecutable: $0) } ?? ["/"]
        return searched.map { PathName.appending(name, to: $0) }
    }

    /// The first of ``candidates(for:)`` that is a file this process may execute; nil when none.
    package static func program(named name: String) -> String? {
        candidates(for: name).first(where: isExecutableFile)
    }

    /// Whether `path` is a regular file (links followed) this process may execute, as
    /// FileManager's `isExecutableFile` answers: a directory is not a program.
    package static func isExecutableFile(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0 && status.st_mode & S_IFMT == S_IFREG && access(path, X_OK) == 0
    }
}
