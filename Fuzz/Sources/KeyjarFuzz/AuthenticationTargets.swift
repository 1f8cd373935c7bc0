import KeyjarAuth

/// WWW-Authenticate / Proxy-Authenticate values (one field per line): parsing terminates with
/// challenges or diagnostics, and the chosen challenge is one of those parsed.
func fuzzChallenge(_ bytes: [UInt8]) {
    let fields = String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let result = ChallengeParser.parse(fields)
    let candidates = ChallengeSelector.candidates(in: result.challenges, supported: [.basic, .digest, .ntlm, .negotiate])
    for candidate in candidates {
        fuzzCheck(result.challenges.contains(candidate.challenge), "a candidate that was not parsed")
        _ = "\(candidate.challenge)"
    }
    _ = try? ChallengeParser.challenges(in: fields)
}

/// git's credential-helper input: parsed or refused with a reason, never a crash; a password
/// never appears in the reason.
func fuzzGitCredential(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    do {
        let request = try GitCredentialRequest.parse(text)
        _ = request.namesServer ? request.space : nil
    } catch {
        for line in text.split(separator: "\n") where line.hasPrefix("password=") && line.count > 12 {
            fuzzCheck(!error.description.contains(line.dropFirst(9)), "a password in an error")
        }
    }
}
