package import Foundation
import Glibc

/// What a command reads whole from standard input: a password, a token, a request body.
package enum StandardInput {
    /// All of standard input. (Foundation's `readDataToEndOfFile()` would crash the command on a
    /// read error, such as a directory given as input.)
    package static func readAll(for what: String) throws(CLIError) -> Data {
        do {
            return try FileHandle.standardInput.readToEnd() ?? Data()
        } catch {
            throw .failure(
                "cannot read the \(what) from standard input: \(String(cString: strerror(errno(of: error))))."
            )
        }
    }

    private static func errno(of error: any Error) -> Int32 {
        ((error as NSError).userInfo[NSUnderlyingErrorKey] as? NSError).map { Int32($0.code) } ?? EIO
    }
}
