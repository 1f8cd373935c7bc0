import Foundation
import Glibc

/// A download's files: the bytes received so far in `NAME.keyjar-part` beside the destination,
/// the record that lets any process continue them (`NAME.keyjar-resume`), and the move into
/// place once everything arrived. Nothing is ever written under the destination's own name
/// until the data is complete, so a failed, cancelled or killed download leaves no truncated
/// file where the user expects the real one.
final class DownloadFiles {
    private(set) var destination: String
    let allowOverwrite: Bool
    private var descriptor: Int32 = -1
    /// Bytes in the partial file.
    private(set) var length: Int64 = 0

    var partialPath: String { DownloadResumeData.partialPath(for: destination) }
    var recordPath: String { DownloadResumeData.recordPath(for: destination) }
    var directory: String { (destination as NSString).deletingLastPathComponent }

    init(destination: String, allowOverwrite: Bool) {
        self.destination = destination
        self.allowOverwrite = allowOverwrite
    }

    deinit { closeDescriptor() }

    /// Opens the partial file, keeping what it holds when `continuing` (its length is where the
    /// download goes on from), else empty. Its mode is what any new file of the user gets.
    func open(continuing: Bool) throws(DownloadFileError) {
        closeDescriptor()
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (continuing ? 0 : O_TRUNC)
        descriptor = Glibc.open(partialPath, flags, 0o666)
        guard descriptor >= 0 else { throw .system("cannot create \(partialPath)", errno) }
        let end = lseek(descriptor, 0, SEEK_END)
        guard end >= 0 else { throw .system("cannot read \(partialPath)", errno) }
        length = Int64(end)
    }

    /// Starts the partial data over (the entity changed, or the server sent it whole).
    func restart() throws(DownloadFileError) {
        guard ftruncate(descriptor, 0) == 0, lseek(descriptor, 0, SEEK_SET) == 0 else {
            throw .system("cannot empty \(partialPath)", errno)
        }
        length = 0
    }

    func append(_ data: Data) throws(DownloadFileError) {
        let failure: Int32? = data.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return nil }
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        if let failure { throw .system("cannot write \(partialPath)", failure) }
        length += Int64(data.count)
    }

    /// Writes the record another process resumes from: under a temporary name, then renamed, so
    /// a reader sees the old record or the new one, never half of one. Private to the user
    /// (URLs can carry tokens).
    func writeRecord(_ record: DownloadResumeData) throws(DownloadFileError) {
        let temporary = recordPath + ".new"
        let file = Glibc.open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw .system("cannot write \(recordPath)", errno) }
        let data = record.encoded()
        let written = data.withUnsafeBytes { Glibc.write(file, $0.baseAddress, $0.count) }
        let failure = written == data.count ? 0 : errno
        Glibc.close(file)
        guard failure == 0, rename(temporary, recordPath) == 0 else {
            let reason = failure != 0 ? failure : errno
            unlink(temporary)
            throw .system("cannot write \(recordPath)", reason)
        }
    }

    func removeRecord() { unlink(recordPath) }

    /// Puts the complete data in place under the destination (decoded by `decode` first, when
    /// given) and removes the partial file and the record. Without `allowOverwrite` a name taken
    /// meanwhile is not replaced: the next free name is used. Returns the final path.
    func commit(
        decode: ((_ from: Int32, _ to: Int32) throws(DownloadFileError) -> Void)?
    ) throws(DownloadFileError) -> String {
        guard fsync(descriptor) == 0 else { throw .system("cannot save \(partialPath)", errno) }
        closeDescriptor()
        var complete = partialPath
        if let decode {
            complete = destination + ".keyjar-decoded"
            let input = Glibc.open(partialPath, O_RDONLY | O_CLOEXEC)
            let output = Glibc.open(complete, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
            defer {
                if input >= 0 { Glibc.close(input) }
                if output >= 0 { Glibc.close(output) }
            }
            guard input >= 0, output >= 0 else { throw .system("cannot decode into \(complete)", errno) }
            do throws(DownloadFileError) {
                try decode(input, output)
                guard fsync(output) == 0 else { throw DownloadFileError.system("cannot save \(complete)", errno) }
            } catch {
                unlink(complete)
                throw error
            }
        }
        try move(complete)
        if complete != partialPath { unlink(partialPath) }
        removeRecord()
        return destination
    }

    private func move(_ complete: String) throws(DownloadFileError) {
        if allowOverwrite {
            guard rename(complete, destination) == 0 else { throw .system("cannot save \(destination)", errno) }
            return
        }
        // link() refuses an existing name atomically, where rename() would replace it.
        while link(complete, destination) != 0 {
            let reason = errno
            guard reason == EEXIST else { throw .system("cannot save \(destination)", reason) }
            let directory = self.directory
            let unique = SuggestedFilename.unique((destination as NSString).lastPathComponent) { name in
                let path = (directory as NSString).appendingPathComponent(name)
                return FileManager.default.fileExists(atPath: path)
            }
            destination = (directory as NSString).appendingPathComponent(unique)
        }
        unlink(complete)
    }

    /// Keeps the partial data and its record for a later resume.
    func keep() { closeDescriptor() }

    /// Removes everything the download wrote.
    func discard() {
        closeDescriptor()
        unlink(partialPath)
        unlink(destination + ".keyjar-decoded")
        removeRecord()
    }

    private func closeDescriptor() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }
}

/// A download's file could not be written; the message names the file and the system's reason.
struct DownloadFileError: Error {
    var message: String
    var code: URLError.Code

    static func system(_ what: String, _ number: Int32) -> DownloadFileError {
        let code: URLError.Code =
            switch number {
            case EACCES, EPERM, EROFS, ENOENT, ENOTDIR: .cannotCreateFile
            default: .cannotWriteToFile
            }
        return DownloadFileError(message: "\(what): \(String(cString: strerror(number)))", code: code)
    }
}
