import KeyjarAuth

/// WWW-Authenticate / Proxy-Authenticate values (one field per line): parsing terminates with
/// challenges or diagnostics, and the chosen challenge is one of those parsed.
func fuzzChallenge(_ bytes: [UInt8]) {
    let fields = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(
        String.init
    )
    let result = ChallengeParser.parse(fields)
    let candidates = ChallengeSelector.candidates(
        in: result.challenges,
        supported: [.basic, .digest, .ntlm, .negotiate]
    )
    for candidate in candidates {
        fuzzCheck(result.challenges.contains(candidate.challenge), "a candidate that was not parsed")
        _ = "\(candidate.challenge)"
    }
    _ = try? ChallengeParser.challenges(in: fields)
}

/// git's credential-helper input: parsed or refused with a reason, never a crash; a password
/// never appears in the reason. Checked by difference: the same input with every password
/// masked must be refused with the very same reason (a password may well be a substring of a
/// fixed message, "toco" of "protocol": found by this target, a false alarm of an earlier
/// substring check).
func fuzzGitCredential(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    do {
        let request = try GitCredentialRequest.parse(text)
        _ = request.namesServer ? request.space : nil
    } catch {
        let masked = maskingPasswords(text)
        do {
            _ = try GitCredentialRequest.parse(masked)
            fuzzCheck(false, "masking the passwords made the input valid")
        } catch let maskedError {
            fuzzCheck(maskedError.description == error.description, "a password in an error")
        }
    }
}

/// The input with each `password=` value replaced by as many asterisks, lines split as the
/// parser splits them.
private func maskingPasswords(_ text: String) -> String {
    text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map { line in
        line.hasPrefix("password=") ? "password=" + String(repeating: "*", count: line.count - 9) : String(line)
    }.joined(separator: "\n")
}
