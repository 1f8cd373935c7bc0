import CoreFoundation  // struct stat's members resolve there in a release build of keyjar alone
import FoundationEssentials
import Glibc
import KeyjarFiles

/// A file a user names for output (`-o`), resolved as curl and the shell treat it: `-` is
/// standard output; a symbolic link is written through, never replaced; a FIFO, a device or a
/// socket is written into as it is; a directory is refused. Only a regular file (or a name
/// with nothing there yet) is replaced as a whole, by renaming a complete file onto it.
package enum OutputFile: Equatable {
    case standardOutput
    /// A regular file, or a new one: the path after following symbolic links.
    case regular(String)
    /// Something that exists and is not a regular file; written into, never replaced.
    case special(String)

    package static func resolve(_ given: String, in directory: String) throws(CLIError) -> OutputFile {
        if given == "-" { return .standardOutput }
        var path = absolute(given, in: directory)
        var info = stat()
        var links = 0
        while lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
            links += 1
            guard links <= 40, let target = readLink(path) else {
                throw .failure("cannot follow the symbolic link \(given): \(String(cString: strerror(ELOOP))).")
            }
            path = absolute(target, in: PathName.directory(of: path))
        }
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
        case S_IFREG: return .regular(path)
        case S_IFDIR: throw .failure("cannot write \(given): it is a directory.")
        default: return .special(path)
        }
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
        switch self {
        case .standardOutput:
            Output.write(Data(bytes))
            try Output.flush()
        case .special(let path):
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw Self.failure(given, errno) }
            defer { close(descriptor) }
            if let failure = Output.writeAll(bytes, to: descriptor) { throw Self.failure(given, failure) }
        case .regular(let path):
            var template = Array((path + ".keyjar-XXXXXX").utf8CString)
            let descriptor = template.withUnsafeMutableBufferPointer { buffer in
                buffer.baseAddress.map { mkstemp($0) } ?? -1
            }
            guard descriptor >= 0 else { throw Self.failure(given, errno) }
            _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
            let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
            var failure = fchmod(descriptor, 0o600) == 0 ? Output.writeAll(bytes, to: descriptor) : errno
            if failure == nil, fsync(descriptor) != 0 { failure = errno }
            if close(descriptor) != 0, failure == nil { failure = errno }
            if failure == nil, rename(temporary, path) != 0 { failure = errno }
            if let failure {
                unlink(temporary)
                throw Self.failure(given, failure)
            }
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
