import CoreFoundation  // struct stat's members resolve there in a release build of keyjar alone
import FoundationEssentials
import Glibc
import KeyjarPlatform

/// A file a user names for output (`-o`), resolved as curl and the shell treat it: `-` is
/// standard output; a symbolic link is written through, never replaced; a FIFO, a device or a
/// socket is written into as it is; a directory is refused. Only a regular file (or a name
/// with nothing there yet) is replaced as a whole, by renaming a complete file onto it.
///
/// In a directory every user can write to (/tmp), a link, a special file or a file that
/// another user planted under the name is refused (``SharedDirectory``), as the kernel's
/// `protected_symlinks` and `protected_fifos` would refuse it to a plain `open`: the write
/// would otherwise go wherever that user chose, or to that user.
package enum OutputFile: Equatable {
    case standardOutput
    /// A regular file, or a new one: the path after following symbolic links.
    case regular(String)
    /// Something that exists and is not a regular file; written into, never replaced.
    case special(String)

    package static func resolve(_ given: String, in directory: String) throws(CLIError) -> OutputFile {
        if given == "-" { return .standardOutput }
        let path = try resolvingLinks(absolute(given, in: directory), given: given)
        var info = stat()
        guard lstat(path, &info) == 0 else {
            guard errno == ENOENT else { throw .failure("cannot write \(given): \(String(cString: strerror(errno))).") }
            var parent = stat()
            let directory = PathName.directory(of: path)
            guard stat(directory, &parent) == 0, parent.st_mode & S_IFMT == S_IFDIR else {
                throw .failure("cannot write \(given): its directory \(directory) does not exist.")
            }
            return .regular(path)
        }
        switch info.st_mode & S_IFMT {
        case S_IFREG:
            // Replaced by a rename, never written into; still another user's file is not
            // taken over (root could replace it).
            try refusePlanted(path, info, in: path, given: given)
            return .regular(path)
        case S_IFDIR: throw .failure("cannot write \(given): it is a directory.")
        default:
            try refusePlanted(path, info, in: path, given: given)
            return .special(path)
        }
    }

    /// The absolute `path` with every symbolic link in it followed by hand, in any component,
    /// each checked as `protected_symlinks` checks a link the kernel follows: one another user
    /// planted in a shared directory (`/tmp/build` → their choice) is refused. What is left
    /// names no link.
    static func resolvingLinks(_ path: String, given: String) throws(CLIError) -> String {
        var pending = path.split(separator: "/").map(String.init)[...]
        var resolved = "/"
        var links = 0
        while let component = pending.popFirst() {
            if component == "." { continue }
            if component == ".." {
                resolved = PathName.directory(of: resolved).isEmpty ? "/" : PathName.directory(of: resolved)
                continue
            }
            let candidate = PathName.appending(component, to: resolved)
            var info = stat()
            guard lstat(candidate, &info) == 0, info.st_mode & S_IFMT == S_IFLNK else {
                resolved = candidate
                continue
            }
            links += 1
            try refusePlanted("the symbolic link \(candidate)", info, in: candidate, given: given)
            guard links <= 40, let target = readLink(candidate) else {
                throw .failure("cannot follow the symbolic link \(given): \(String(cString: strerror(ELOOP))).")
            }
            if target.hasPrefix("/") { resolved = "/" }
            pending = (target.split(separator: "/").map(String.init) + pending)[...]
        }
        return resolved
    }

    /// The directory at `path` (which names no link), opened `O_PATH` one component at a time
    /// without following a link: a component swapped for a link since it was resolved is an
    /// error, not followed. -1 with errno set on failure.
    private static func openDirectory(_ path: String) -> Int32 {
        var descriptor = Glibc.open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)
        for component in path.split(separator: "/") where descriptor >= 0 {
            let next = openat(descriptor, String(component), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            let failure = errno
            close(descriptor)
            errno = failure
            descriptor = next
        }
        return descriptor
    }

    /// Refuses an entry another user planted in a shared directory (``SharedDirectory``).
    private static func refusePlanted(_ what: String, _ entry: stat, in path: String, given: String) throws(CLIError) {
        var parent = stat()
        guard stat(PathName.directory(of: path), &parent) == 0 else { return }
        guard SharedDirectory.mayUse(ownedBy: entry.st_uid, in: parent) else {
            throw .failure("will not write \(given): \(SharedDirectory.refusal(what, ownedBy: entry.st_uid)).")
        }
    }

    /// Opens a special file (``special(_:)``) for writing, checked on the descriptor that is
    /// written, so that nothing can be swapped in between: the entry is opened without
    /// following a link and without opening it for writing (a FIFO with no reader would block),
    /// checked (still special, not another user's in a shared directory), then opened for
    /// writing through that very descriptor.
    package static func openSpecial(_ path: String, named given: String) throws(CLIError) -> Int32 {
        let name = String(path.split(separator: "/").last ?? "")
        let directory = openDirectory(PathName.directory(of: path))
        guard directory >= 0 else { throw failure(given, errno) }
        defer { close(directory) }
        let handle = openat(directory, name, O_PATH | O_NOFOLLOW | O_CLOEXEC)
        guard handle >= 0 else { throw failure(given, errno) }
        defer { close(handle) }
        var entry = stat()
        var parent = stat()
        guard fstat(handle, &entry) == 0, fstat(directory, &parent) == 0 else { throw failure(given, errno) }
        let kind = entry.st_mode & S_IFMT
        guard kind != S_IFREG, kind != S_IFDIR, kind != S_IFLNK else {
            throw .failure("cannot write \(given): it changed while it was being opened; nothing was written.")
        }
        guard SharedDirectory.mayUse(ownedBy: entry.st_uid, in: parent) else {
            throw .failure("will not write \(given): \(SharedDirectory.refusal(path, ownedBy: entry.st_uid)).")
        }
        let descriptor = Glibc.open("/proc/self/fd/\(handle)", O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw failure(given, errno) }
        return descriptor
    }

    package static func absolute(_ path: String, in directory: String) -> String {
        let expanded = PathName.expandingTilde(path)
        return expanded.hasPrefix("/") ? expanded : PathName.appending(expanded, to: directory)
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Writes `bytes` as the whole content, readable by the user only (`0600`): to standard
    /// output; into a special file as it is; or, for a regular file, to a new file beside it
    /// that is then renamed onto it, so that a failure (a full disk) leaves the old file whole
    /// and the new one is never readable by others, whatever the old one's mode was.
    package func writePrivately(_ bytes: [UInt8], named given: String) throws(CLIError) {
        try writePrivately(named: given) { write in try write(bytes) }
    }

    /// As ``writePrivately(_:named:)``, the content written piece by piece as `produce` hands
    /// it over, so that it is never held whole. An error `produce` throws leaves a regular
    /// file as it was (the new one is removed) and is thrown as it is.
    package func writePrivately(
        named given: String,
        producing produce: (_ write: ([UInt8]) throws(CLIError) -> Void) throws -> Void
    ) throws(CLIError) {
        func rethrown(_ error: any Error) -> CLIError {
            error as? CLIError ?? .failure("cannot write \(given): \(error)")
        }
        switch self {
        case .standardOutput:
            do {
                try produce { bytes throws(CLIError) in Output.write(Data(bytes)) }
            } catch {
                throw rethrown(error)
            }
            try Output.flush()
        case .special(let path):
            let descriptor = try Self.openSpecial(path, named: given)
            defer { close(descriptor) }
            do {
                try produce { bytes throws(CLIError) in
                    if let failure = Output.writeAll(bytes, to: descriptor) { throw Self.failure(given, failure) }
                }
            } catch {
                throw rethrown(error)
            }
        case .regular(let path):
            var template = Array((path + ".keyjar-XXXXXX").utf8CString)
            let descriptor = template.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress.map { mkstemp($0) } ?? -1
            }
            guard descriptor >= 0 else { throw Self.failure(given, errno) }
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            var produced: (any Error)?
            var failure: Int32? = fchmod(descriptor, 0o600) == 0 ? nil : errno
            if failure == nil {
                do {
                    try produce { bytes throws(CLIError) in
                        if let failure = Output.writeAll(bytes, to: descriptor) { throw Self.failure(given, failure) }
                    }
                } catch {
                    produced = error
                }
            }
            if produced == nil, failure == nil, fsync(descriptor) != 0 { failure = errno }
            if close(descriptor) != 0, failure == nil { failure = errno }
            if produced == nil, failure == nil, rename(temporary, path) != 0 { failure = errno }
            if produced != nil || failure != nil { unlink(temporary) }
            if let produced { throw rethrown(produced) }
            if let failure { throw Self.failure(given, failure) }
        }
    }

    /// Why a file the user named cannot be read, as the system says it (errno): Foundation's
    /// own reading APIs say only that "the operation could not be completed".
    package static func whyUnreadable(_ path: String) -> String {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return String(cString: strerror(errno)) }
        defer { close(descriptor) }
        var byte: UInt8 = 0
        return read(descriptor, &byte, 1) < 0 ? String(cString: strerror(errno)) : "it cannot be read"
    }

    private static func failure(_ given: String, _ number: Int32) -> CLIError {
        .failure("cannot write \(given): \(String(cString: strerror(number))).")
    }
}
