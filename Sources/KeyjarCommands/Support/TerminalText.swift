import KeyjarCore

/// Text that someone else wrote (a server's status line, realm or file name, a certificate's
/// subject, a cookie), made safe to show on a terminal. A control character — C0 (a line break
/// only where the message itself has them), DEL, C1 — lets whoever wrote the text move the
/// cursor, recolour, retitle or erase what the user sees; a bidirectional control reorders the
/// line (a file name that reads backwards). Each is shown escaped instead, as `\u{1B}`, so the
/// user still sees that it was there.
package enum TerminalText {
    package static func safe(_ text: String, keepingLineBreaks: Bool = false) -> String {
        func shown(_ scalar: Unicode.Scalar) -> Bool {
            !scalar.isControlOrBidiFormat || (keepingLineBreaks && scalar == "\n")
        }
        // Almost every text is clean: one pass, no copy.
        guard !text.unicodeScalars.allSatisfy(shown) else { return text }
        var safe = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            if shown(scalar) {
                safe.append(scalar)
            } else {
                safe.append(contentsOf: "\\u{\(String(scalar.value, radix: 16, uppercase: true))}".unicodeScalars)
            }
        }
        return String(safe)
    }

    /// At most `limit` characters of `text`, safe, with "…" when cut: user input echoed in an
    /// error (which may be a pasted secret, or hold anything).
    package static func excerpt(_ text: String, limit: Int) -> String {
        let cut = safe(String(text.prefix(limit)))
        return text.count > limit ? cut + "…" : cut
    }
}
