import CProcessControl
import Glibc

/// Writing to a file descriptor by one rule: every byte, again after an interruption (EINTR), a
/// failure reported by its errno. Every module that writes a file or a pipe through a descriptor
/// writes through this.
package enum FileDescriptor {
    /// How the bytes reach the kernel.
    package enum Call: Sendable {
        /// write(2): a file or a pipe.
        case write
        /// send(2) with MSG_NOSIGNAL: a socket, whose peer may have gone — that write then fails
        /// with EPIPE instead of raising SIGPIPE, which would end a client's whole process.
        case sendWithoutSignal
    }

    /// Writes all of `buffer` to `descriptor`; nil when every byte was written, else the errno
    /// of the write that failed (EIO for one that wrote nothing without saying why).
    package static func writeAll(
        _ buffer: UnsafeRawBufferPointer,
        to descriptor: Int32,
        by call: Call = .write
    ) -> Int32? {
        guard let base = buffer.baseAddress else { return nil }
        var offset = 0
        while offset < buffer.count {
            let written =
                switch call {
                case .write: Glibc.write(descriptor, base + offset, buffer.count - offset)
                case .sendWithoutSignal: send(descriptor, base + offset, buffer.count - offset, Int32(MSG_NOSIGNAL))
                }
            if written < 0 {
                if errno == EINTR { continue }
                return errno
            }
            if written == 0 { return EIO }
            offset += written
        }
        return nil
    }

    /// ``writeAll(_:to:)`` of a byte array.
    package static func writeAll(_ bytes: [UInt8], to descriptor: Int32, by call: Call = .write) -> Int32? {
        bytes.withUnsafeBytes { writeAll($0, to: descriptor, by: call) }
    }

    /// A pipe whose ends no child inherits, from the moment it exists: a write end a child kept
    /// would keep the reader from ever seeing the pipe's end. Non-blocking ends when asked.
    /// Nil when there is none to be had (errno says why).
    package static func pipe(nonBlocking: Bool = false) -> (read: Int32, write: Int32)? {
        var ends: [Int32] = [0, 0]
        guard pipe2(&ends, O_CLOEXEC | (nonBlocking ? O_NONBLOCK : 0)) == 0 else { return nil }
        return (ends[0], ends[1])
    }
}
