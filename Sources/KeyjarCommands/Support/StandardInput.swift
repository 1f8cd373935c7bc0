package import FoundationEssentials
import Glibc

/// What a command reads whole from standard input: a password, a token, a request body.
package enum StandardInput {
    /// All of standard input; a read error (a directory given as input) is a failure that says
    /// what the system said.
    package static func readAll(for what: String) throws(CLIError) -> Data {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        // What was read may be a password: the read buffer does not keep it.
        defer { chunk.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) } }
        while true {
            let count = chunk.withUnsafeMutableBytes { read(STDIN_FILENO, $0.baseAddress, $0.count) }
            if count > 0 {
                bytes.append(contentsOf: chunk[..<count])
            } else if count == 0 {
                return Data(bytes)
            } else if errno != EINTR {
                throw .failure("cannot read the \(what) from standard input: \(String(cString: strerror(errno))).")
            }
        }
    }
}
