import Glibc

/// keyjard's last committed sequence number, in a page of shared memory beside the socket.
///
/// keyjard stores the number after each commit and before it acknowledges it; a client maps
/// the page read-only and compares it with its replica's sequence before each lookup (one
/// atomic load). When they differ the replica is behind and catches up first, so a lookup that
/// starts after any process's write was acknowledged sees that write, without every process
/// being woken for every change. The page holds no cookie data.
///
/// Layout (`Schemas/protocol.md`, "The sequence page"): bytes 0–7 the magic `KJSEQ1` padded
/// with zeros, 8–15 the sequence number, 16–23 keyjard's process id; native byte order (the
/// file never leaves the machine); the file is one page long, mode 0600, in the socket's 0700
/// directory. keyjard reuses the file across restarts rather than replacing it: a replaced
/// file would leave running clients reading a page nobody writes any more.
public enum SequencePage {
    /// `keyjard.sequence` in the socket's directory.
    public static func path(forSocket socketPath: String) -> String {
        guard let slash = socketPath.utf8.lastIndex(of: UInt8(ascii: "/")) else { return "keyjard.sequence" }
        return String(socketPath[..<slash]) + "/keyjard.sequence"
    }

    package static let size = 4096
    package static let magic: UInt64 = {
        var value: UInt64 = 0
        withUnsafeMutableBytes(of: &value) { bytes in
            for (index, byte) in "KJSEQ1".utf8.enumerated() { bytes[index] = byte }
        }
        return value
    }()
    package static let sequenceOffset = 8
    package static let pidOffset = 16

    /// Why the page could not be opened or made.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String { "sequence page \(path): \(reason)" }

        package init(path: String, reason: String) {
            self.path = path
            self.reason = reason
        }
    }

    package static func systemFailure(_ path: String, _ call: String) -> Failure {
        Failure(path: path, reason: "\(call): \(String(cString: strerror(errno)))")
    }
}
