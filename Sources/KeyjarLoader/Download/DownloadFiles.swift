import Foundation
import Glibc
import KeyjarPlatform

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
    /// download goes on from), else made anew; `exclusive` refuses one that exists (EEXIST). Its
    /// mode is what any new file of the user gets. Only a regular file of this user is written:
    /// a link, a FIFO or another user's file left under that name (in /tmp, say, to read the
    /// download or redirect it) is refused, checked on the descriptor that is written.
    func open(continuing: Bool, exclusive: Bool = false) throws(DownloadFileError) {
        closeDescriptor()
        // A new partial file is created here, never one found under its name.
        if !continuing, !exclusive { unlink(partialPath) }
        // O_NONBLOCK: a FIFO in its place must not hold the open until someone reads it.
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | (continuing ? 0 : O_EXCL)
        descriptor = Glibc.open(partialPath, flags, 0o666)
        guard descriptor >= 0 else { throw .system("cannot create \(partialPath)", errno) }
        var entry = stat()
        guard fstat(descriptor, &entry) == 0 else { throw .system("cannot read \(partialPath)", errno) }
        // One link only: another name for it (a hard link another user made to one of this
        // user's files) would have the download written into that file.
        guard entry.st_mode & S_IFMT == S_IFREG, entry.st_uid == geteuid(), entry.st_nlink == 1 else {
            closeDescriptor()
            throw .system("will not write \(partialPath), which is not a file of yours", EPERM)
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
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
        let failure = data.withUnsafeBytes { FileDescriptor.writeAll($0, to: descriptor) }
        if let failure { throw .system("cannot write \(partialPath)", failure) }
        length += Int64(data.count)
    }

    /// Writes the record another process resumes from: under a temporary name, then renamed, so
    /// a reader sees the old record or the new one, never half of one. Private to the user
    /// (URLs can carry tokens).
    func writeRecord(_ record: DownloadResumeData) throws(DownloadFileError) {
        let temporary = recordPath + ".new"
        // Made anew, never through a link left under that name, and 0600 whatever was there.
        unlink(temporary)
        let file = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw .system("cannot write \(recordPath)", errno) }
        let data = record.encoded()
        let failure = data.withUnsafeBytes { FileDescriptor.writeAll($0, to: file) } ?? 0
        Glibc.close(file)
        guard failure == 0, rename(temporary, recordPath) == 0 else {
            let reason = failure != 0 ? failure : errno
            unlink(temporary)
            throw .system("cannot write \(recordPath)", reason)
        }
    }

    func removeRecord() { unlink(recordPath) }

    /// Makes the complete data durable (and decodes it with `decode` into a file beside it,
    /// when given); returns the file to move into place. Run outside the download's lock: a
    /// decode can take long. The partial file is closed.
    func prepareCommit(
        decode: ((_ from: Int32, _ to: Int32) throws(DownloadFileError) -> Void)?
    ) throws(DownloadFileError) -> String {
        guard fsync(descriptor) == 0 else { throw .system("cannot save \(partialPath)", errno) }
        closeDescriptor()
        guard let decode else { return partialPath }
        let decoded = destination + ".keyjar-decoded"
        unlink(decoded)
        let input = Glibc.open(partialPath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        let output = Glibc.open(decoded, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o666)
        defer {
            if input >= 0 { Glibc.close(input) }
            if output >= 0 { Glibc.close(output) }
        }
        guard input >= 0, output >= 0 else { throw .system("cannot decode into \(decoded)", errno) }
        do throws(DownloadFileError) {
            try decode(input, output)
            guard fsync(output) == 0 else { throw DownloadFileError.system("cannot save \(decoded)", errno) }
        } catch {
            unlink(decoded)
            throw error
        }
        return decoded
    }

    /// Moves `complete` (from `prepareCommit`) into place under the destination and removes the
    /// partial file and the record. Without `allowOverwrite` a name taken meanwhile is not
    /// replaced: the next free name is used. Returns the final path.
    func finishCommit(_ complete: String) throws(DownloadFileError) -> String {
        // This download's own files, named before the destination may change.
        let partial = partialPath
        let record = recordPath
        try move(complete)
        if complete != partial { unlink(partial) }
        unlink(record)
        return destination
    }

    /// Whether a file or another download's partial data holds `path`. The partial file is
    /// looked at first: a download that finishes links its file into place before it removes
    /// its partial one, so one of the two is always seen. Looked at the other way round, a
    /// download finishing between the two looks left the name free to a second one, which then
    /// had to save under `NAME-1-1` (seen once in the suite, 2026-11-27).
    static func isTaken(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: DownloadResumeData.partialPath(for: path))
            || FileManager.default.fileExists(atPath: path)
    }

    private func move(_ complete: String) throws(DownloadFileError) {
        if allowOverwrite {
            guard rename(complete, destination) == 0 else { throw .system("cannot save \(destination)", errno) }
            return
        }
        // link() refuses an existing name atomically, where rename() would replace it.
        while link(complete, destination) != 0 {
            let reason = errno
            if reason == EPERM || reason == EOPNOTSUPP || reason == EMLINK,
                !FileManager.default.fileExists(atPath: destination)
            {
                // A file system without hard links (FAT, some FUSE ones): check, then rename.
                guard rename(complete, destination) == 0 else { throw .system("cannot save \(destination)", errno) }
                return
            }
            guard reason == EEXIST || reason == EPERM || reason == EOPNOTSUPP || reason == EMLINK else {
                throw .system("cannot save \(destination)", reason)
            }
            let directory = self.directory
            let unique = SuggestedFilename.unique((destination as NSString).lastPathComponent) { name in
                Self.isTaken((directory as NSString).appendingPathComponent(name))
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
    /// The system's error number, when one caused it.
    var number: Int32 = 0

    static func system(_ what: String, _ number: Int32) -> DownloadFileError {
        let code: URLError.Code =
            switch number {
            case EACCES, EPERM, EROFS, ENOENT, ENOTDIR: .cannotCreateFile
            default: .cannotWriteToFile
            }
        return DownloadFileError(message: "\(what): \(String(cString: strerror(number)))", code: code, number: number)
    }
}
