package import FoundationEssentials
import Glibc
package import KeyjarCodec
import KeyjarLocks
import KeyjarPlatform

/// Standard output carries results only; everything else goes to standard error.
///
/// Every result goes through here, so that output that cannot be written (a full disk, a
/// closed descriptor, a reader that went away) is never lost in silence: the first failure is
/// kept, and the command ends with one `keyjar:` line and exit status 1 (`finish()`), however
/// the output was produced.
package enum Output {
    private struct State {
        /// Results not yet written: written in pieces of `flushSize`, and at the end.
        var buffer: [UInt8] = []
        /// errno of the first write that failed; nothing more is attempted after it.
        var failure: Int32?
        /// Standard output was closed when keyjar started (`keyjar … >&-`).
        var closed = false
    }

    private static let state = Locked(State())
    private static let flushSize = 1 << 16

    /// Makes sure descriptors 0, 1 and 2 are open before anything else opens a file: a closed
    /// one would otherwise be handed out to keyjard's socket or a file, and results written
    /// there. A closed standard output is remembered; writing a result to it then fails.
    package static func prepare() {
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) < 0 {
            let null = open("/dev/null", descriptor == STDIN_FILENO ? O_RDONLY : O_WRONLY)
            if null >= 0, null != descriptor {
                dup2(null, descriptor)
                close(null)
            }
            if descriptor == STDOUT_FILENO { state.withLock { $0.closed = true } }
        }
    }

    /// Whether standard output was closed when keyjar started.
    package static var isClosed: Bool { state.withLock { $0.closed } }

    package static func line(_ text: String) {
        write(Data((text + "\n").utf8))
    }

    /// Writes a line at once, for output that must reach a pipe as it happens (watch); throws
    /// when it cannot, so that a watcher whose reader is gone stops.
    package static func flushedLine(_ text: String) throws(CLIError) {
        line(text)
        try flush()
    }

    /// Bytes as they are (an exported file, a response head).
    package static func write(_ data: Data) {
        let full = state.withLock { state in
            state.buffer.append(contentsOf: data)
            return state.buffer.count >= flushSize
        }
        if full { try? flush() }
    }

    /// Writes what is buffered; throws the first failure (now or earlier).
    package static func flush() throws(CLIError) {
        let failure: Int32? = state.withLock { state in
            if state.failure == nil, !state.buffer.isEmpty {
                if state.closed {
                    state.failure = EBADF
                } else {
                    state.failure = writeAll(state.buffer, to: STDOUT_FILENO)
                }
                state.buffer.removeAll(keepingCapacity: true)
            }
            return state.failure
        }
        if let failure { throw writeFailure(failure) }
    }

    /// Called once the command is done: every result written, or the command fails.
    package static func finish() throws(CLIError) {
        try flush()
    }

    /// The error for output that could not be written, in the command's words.
    package static func writeFailure(_ number: Int32) -> CLIError {
        let reason = number == EBADF ? "it is closed" : String(cString: strerror(number))
        return .failure("cannot write the output to standard output: \(reason).")
    }

    /// Writes every byte to a descriptor; returns errno of a failure.
    package static func writeAll(_ bytes: some ContiguousBytes, to descriptor: Int32) -> Int32? {
        bytes.withUnsafeBytes { FileDescriptor.writeAll($0, to: descriptor) }
    }

    /// A message on standard error. It may quote what a server or a file said (a status line,
    /// a realm, a certificate's subject, a file name): no control character of theirs reaches
    /// the terminal (``TerminalText``).
    package static func error(_ text: String) {
        _ = writeAll(
            Array(TerminalText.safe("keyjar: " + text + "\n", keepingLineBreaks: true).utf8),
            to: STDERR_FILENO
        )
    }

    package static var standardOutputIsTerminal: Bool { isatty(STDOUT_FILENO) == 1 }

    /// JSON for `--json` output: sorted keys so scripts and diffs see a stable shape.
    package static func json(_ value: JSONValue) -> String {
        String(decoding: value.encoded(.readable), as: UTF8.self)
    }

    /// Unix seconds as an ISO 8601 UTC time.
    package static func time(_ date: Date) -> String { date.ISO8601Format() }
}
