package import FoundationEssentials
import Glibc
import KeyjarPlatform

/// Reads a password without it ever being an argument: from standard input, or typed at the
/// terminal with echo off.
package enum PasswordInput {
    /// All of standard input, less one trailing newline (`echo pw |` and `printf pw |` both work).
    package static func fromStandardInput(what: String = "password") throws(CLIError) -> String {
        try password(from: StandardInput.readAll(for: what), what: what)
    }

    /// The secret in piped bytes: exactly one trailing `\n` or `\r\n` is dropped, and nothing
    /// else. Bytes, not Characters: `"\r\n"` is one Character, so trimming by Characters
    /// would take a character of the secret with it.
    package static func password(from data: Data, what: String = "password") throws(CLIError) -> String {
        var bytes = [UInt8](data)
        if bytes.last == UInt8(ascii: "\n") {
            bytes.removeLast()
            if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        }
        guard let password = String(validating: bytes, as: UTF8.self) else {
            throw .usage("the \(what) on standard input is not UTF-8 text.")
        }
        guard !password.isEmpty else { throw .usage("the \(what) on standard input is empty.") }
        return password
    }

    /// Reads a password or passphrase from an open descriptor (a systemd credential, a PAM exec).
    package static func fromDescriptor(_ descriptor: Int32, what: String = "password") throws -> String {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        defer { chunk.wipe() }
        while true {
            let count = read(descriptor, &chunk, chunk.count)
            if count == 0 { break }
            if count < 0 {
                if errno == EINTR { continue }
                throw CLIError.usage(
                    "cannot read the \(what) from descriptor \(descriptor): \(String(cString: strerror(errno)))"
                )
            }
            bytes += chunk[..<count]
        }
        defer { bytes.wipe() }
        return try password(from: Data(bytes), what: what)
    }

    /// A passphrase read as a password is, never from an argument: from standard input, an
    /// open descriptor, or the terminal with `prompt` (typed twice when `confirming`).
    package static func passphrase(
        standardInput: Bool,
        descriptor: Int32? = nil,
        prompt: String,
        confirming: Bool
    ) throws -> String {
        if standardInput { return try fromStandardInput(what: "passphrase") }
        if let descriptor { return try fromDescriptor(descriptor, what: "passphrase") }
        let passphrase = try self.prompt(prompt, what: "passphrase", pipedWith: "--passphrase-stdin")
        if confirming { try confirm(passphrase) }
        return passphrase
    }

    /// Asks for a new passphrase once more at the terminal; a different one is refused.
    package static func confirm(_ passphrase: String) throws {
        let again = try prompt("The same passphrase again: ", what: "passphrase", pipedWith: "--passphrase-stdin")
        guard again == passphrase else { throw CLIError.usage("the two passphrases differ; nothing was done.") }
    }

    /// Whether there is a controlling terminal to ask on.
    package static var hasTerminal: Bool {
        let terminal = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard terminal >= 0 else { return false }
        close(terminal)
        return true
    }

    /// Prompts on the controlling terminal with echo off, restoring the terminal afterwards.
    package static func prompt(
        _ message: String,
        what: String = "password",
        pipedWith option: String = "--password-stdin"
    ) throws -> String {
        let terminal = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard terminal >= 0 else {
            throw CLIError.usage("there is no terminal to ask for the \(what) on; pipe it in with \(option).")
        }
        defer { close(terminal) }
        var saved = termios()
        guard tcgetattr(terminal, &saved) == 0 else {
            throw CLIError.usage("cannot turn off echo on the terminal; pipe the \(what) in with \(option).")
        }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        silent.c_lflag |= tcflag_t(ICANON)
        write(terminal, message)
        // Ctrl-C (or a kill) while echo is off must give the terminal back as it was: a defer
        // never runs when a signal ends the process, so a handler restores it first.
        TerminalRestore.arm(terminal: terminal, mode: saved)
        tcsetattr(terminal, TCSAFLUSH, &silent)
        defer {
            tcsetattr(terminal, TCSAFLUSH, &saved)
            TerminalRestore.disarm()
            write(terminal, "\n")
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(terminal, &byte, 1) == 1, byte != UInt8(ascii: "\n") { bytes.append(byte) }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        let password = String(decoding: bytes, as: UTF8.self)
        guard !password.isEmpty else { throw CLIError.usage("no \(what) was typed.") }
        return password
    }

    private static func write(_ terminal: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBufferPointer { Glibc.write(terminal, $0.baseAddress, $0.count) }
    }
}

/// Puts the terminal's mode back when a signal ends keyjar at a password prompt, then lets the
/// signal end it as it would have (the shell sees 130 for Ctrl-C). Only async-signal-safe
/// calls happen in the handler; the state it reads is written before the handler is set.
private enum TerminalRestore {
    nonisolated(unsafe) static var terminal: Int32 = -1
    nonisolated(unsafe) static var mode = termios()
    static let signals = [SIGINT, SIGTERM, SIGHUP, SIGQUIT]

    static func arm(terminal: Int32, mode: termios) {
        Self.terminal = terminal
        Self.mode = mode
        for number in signals {
            signal(number) { number in
                tcsetattr(TerminalRestore.terminal, TCSANOW, &TerminalRestore.mode)
                _ = Glibc.write(TerminalRestore.terminal, "\n", 1)
                signal(number, SIG_DFL)
                raise(number)
            }
        }
    }

    static func disarm() {
        for number in signals { signal(number, SIG_DFL) }
    }
}
