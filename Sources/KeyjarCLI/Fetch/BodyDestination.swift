import Foundation
import Glibc

/// Where a fetched body goes: standard output, or a file that appears only when the load
/// succeeded. The file is written under a temporary name beside it and renamed at the end, so
/// a failed or interrupted download never leaves a truncated file under the wanted name.
final class BodyDestination {
    private let finalPath: String?
    private let temporaryPath: String?
    private let descriptor: Int32

    var isFile: Bool { finalPath != nil }

    static func standardOutput() -> BodyDestination {
        BodyDestination(path: nil, temporary: nil, descriptor: STDOUT_FILENO)
    }

    static func file(_ path: String) throws(CLIError) -> BodyDestination {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        var template = Array("\(directory)/.\(url.lastPathComponent).keyjar-XXXXXX".utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { name in name.baseAddress.map { mkstemp($0) } ?? -1 }
        guard descriptor >= 0, fcntl(descriptor, F_SETFD, FD_CLOEXEC) == 0 else {
            throw .failure("cannot write in \(directory): \(String(cString: strerror(errno))).")
        }
        let temporary = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // mkostemp makes the file 0600; a download gets the mode any new file would.
        let mask = umask(0)
        umask(mask)
        fchmod(descriptor, 0o666 & ~mask)
        return BodyDestination(path: path, temporary: temporary, descriptor: descriptor)
    }

    private init(path: String?, temporary: String?, descriptor: Int32) {
        finalPath = path
        temporaryPath = temporary
        self.descriptor = descriptor
    }

    func write(_ data: Data) throws(CLIError) {
        let failure: Int32? = data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                guard let base = buffer.baseAddress else { break }
                let written = Glibc.write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        if let failure {
            throw .failure("cannot write the response: \(String(cString: strerror(failure))).")
        }
    }

    /// A new response replaces the previous one (a redirect body shown, a multipart part).
    func discard() {
        guard isFile else { return }
        _ = ftruncate(descriptor, 0)
        _ = lseek(descriptor, 0, SEEK_SET)
    }

    /// Puts the file in place.
    func commit() throws(CLIError) {
        guard let finalPath, let temporaryPath else { return }
        let synced = fsync(descriptor) == 0
        close(descriptor)
        guard synced, rename(temporaryPath, finalPath) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw .failure("cannot save the response as \(finalPath): \(reason).")
        }
    }

    /// Removes the temporary file: nothing is left behind by a failed load.
    func abandon() {
        guard let temporaryPath else { return }
        close(descriptor)
        unlink(temporaryPath)
    }
}
