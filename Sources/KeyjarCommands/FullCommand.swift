import Glibc
package import KeyjarConnection
package import KeyjarCore
import KeyjarLocks
import KeyjarPlatform

/// keyjar-full: every command, with what the front does not link (libcurl through the loader,
/// libsecret, SQLite, libcrypto). The front replaces itself with it for every command it does
/// not run itself (``FrontRoute``), as git runs git-remote-https only when a remote needs
/// libcurl. It is installed beside `keyjar`.
package enum FullCommand {
    package static let executableName = "keyjar-full"

    /// keyjar-full beside the running executable (symbolic links resolved, so that a
    /// `git-credential-keyjar` link finds it too). readlink and string operations: Foundation's
    /// FileManager and URL cost a sixth of a handed-over call.
    package static var path: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let running = length > 0 ? String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) : ""
        // Never a relative name (one in the working directory) should readlink fail.
        let directory = PathName.directory(of: running)
        return PathName.appending(executableName, to: directory.isEmpty ? "/" : directory)
    }

    /// Replaces this process with keyjar-full, given the same arguments (the first, the name it
    /// was called by, included: `git-credential-keyjar` means the same to it) and environment.
    /// `input`, when given, is what it reads on standard input: what the front had already read
    /// of its own.
    package static func exec(input: [UInt8]? = nil) -> Never {
        try? Output.finish()
        if let input, let failure = replaceStandardInput(with: input) {
            fail("cannot hand the request to \(executableName): \(failure)")
        }
        let path = path
        let arguments = CommandLine.arguments
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) }
        argv.append(nil)
        execv(path, argv)
        let number = errno
        fail(
            "cannot run \(path) (\(String(cString: strerror(number)))): every command but cookie get and "
                + "git-credential needs it beside keyjar (docs/command-line.md)."
        )
    }

    /// Standard input becomes an unnamed temporary file holding `bytes`: any size, and
    /// readable to its end.
    private static func replaceStandardInput(with bytes: [UInt8]) -> String? {
        guard let file = tmpfile() else { return String(cString: strerror(errno)) }
        defer { fclose(file) }
        let descriptor = fileno(file)
        if let failure = Output.writeAll(bytes, to: descriptor) { return String(cString: strerror(failure)) }
        guard lseek(descriptor, 0, SEEK_SET) == 0, dup2(descriptor, STDIN_FILENO) == STDIN_FILENO else {
            return String(cString: strerror(errno))
        }
        return nil
    }

    private static func fail(_ message: String) -> Never {
        Output.error(message)
        exit(CLIError.Status.failure.rawValue)
    }
}

/// Refreshing a stored token needs the loader (libcurl): keyjar-full installs it before it runs
/// a command. In the front nothing is installed, and a command that must refresh hands itself
/// to keyjar-full (``FullCommand/exec(input:)``).
package enum StoredTokenRefresh {
    /// Refreshes the token of `record` through keyjard's lease; throws ``CLIError`` when the
    /// endpoint refuses (the message says why, never the token). `rejected`: the token still
    /// stored that the caller will not use (about to expire), so that keyjard does not answer
    /// with it; nil when the caller only saw the stored one expired.
    package typealias Refresh = @Sendable (CredentialRecord, _ rejected: String?, KeyjarClient) throws -> Void

    private static let refresh = Locked<Refresh?>(nil)

    package static var installed: Refresh? { refresh.withLock { $0 } }

    package static func install(_ body: @escaping Refresh) { refresh.withLock { $0 = body } }
}
