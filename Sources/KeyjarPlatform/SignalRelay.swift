import CProcessControl
import Glibc

/// Signals turned into records on a pipe, for a program that passes them on to a child
/// (`keyjar run --mask`): a handler may do nothing but write (async-signal-safe), so it writes
/// two bytes, the signal and whether a process sent it with kill(2) rather than the terminal
/// (which signals the whole foreground process group, the child with it, by itself). The
/// handler is C (CProcessControl): Swift cannot give sigaction one that reads siginfo.
package enum SignalRelay {
    /// One signal received.
    package struct Received: Sendable, Hashable {
        package var signal: Int32
        /// Sent by a process (kill(1), a supervisor); false for the terminal's and the kernel's.
        package var sentByProcess: Bool
    }

    /// From now on, each of `signals` is written to `descriptor` (the write end of a
    /// non-blocking pipe) instead of taking its default action.
    package static func record(_ signals: [Int32], into descriptor: Int32) {
        for number in signals { _ = keyjar_relay_signal(number, descriptor) }
    }

    /// Every record waiting on `descriptor` (the read end, non-blocking).
    package static func drain(_ descriptor: Int32) -> [Received] {
        var received: [Received] = []
        var record: (UInt8, UInt8) = (0, 0)
        while withUnsafeMutableBytes(of: &record, { read(descriptor, $0.baseAddress, 2) }) == 2 {
            received.append(Received(signal: Int32(record.0), sentByProcess: record.1 == 1))
        }
        return received
    }
}
