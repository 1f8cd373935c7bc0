import Foundation
import Glibc

/// Reads a password without it ever being an argument: from standard input, or typed at the
/// terminal with echo off.
enum PasswordInput {
    /// All of standard input, less one trailing newline (`echo pw |` and `printf pw |` both work).
    static func fromStandardInput() throws -> String {
        let data = FileHandle.standardInput.readDataToEndOfFile()
        guard var password = String(data: data, encoding: .utf8) else {
            throw CLIError.failure("the password on standard input is not UTF-8 text.")
        }
        if password.hasSuffix("\r\n") {
            password.removeLast(2)
        } else if password.hasSuffix("\n") {
            password.removeLast()
        }
        guard !password.isEmpty else { throw CLIError.failure("the password on standard input is empty.") }
        return password
    }

    /// Prompts on the controlling terminal with echo off, restoring the terminal afterwards.
    static func prompt(_ message: String) throws -> String {
        let terminal = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard terminal >= 0 else {
            throw CLIError.usage("there is no terminal to ask for the password on; pipe it in with --password-stdin.")
        }
        defer { close(terminal) }
        var saved = termios()
        guard tcgetattr(terminal, &saved) == 0 else {
            throw CLIError.usage("cannot turn off echo on the terminal; pipe the password in with --password-stdin.")
        }
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        silent.c_lflag |= tcflag_t(ICANON)
        write(terminal, message)
        tcsetattr(terminal, TCSAFLUSH, &silent)
        defer {
            tcsetattr(terminal, TCSAFLUSH, &saved)
            write(terminal, "\n")
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while read(terminal, &byte, 1) == 1, byte != UInt8(ascii: "\n") { bytes.append(byte) }
        if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
        let password = String(decoding: bytes, as: UTF8.self)
        guard !password.isEmpty else { throw CLIError.failure("no password was typed.") }
        return password
    }

    private static func write(_ terminal: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBufferPointer { Glibc.write(terminal, $0.baseAddress, $0.count) }
    }
}
