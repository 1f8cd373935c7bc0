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

/// git's credential-helper input: parsed or refused with a reason, never a crash; a secret
/// never appears in the reason. Checked by difference: the same input with every secret masked
/// must be refused with the very same reason (a password may well be a substring of a fixed
/// message, "toco" of "protocol": found by this target, a false alarm of an earlier substring
/// check). What was parsed, written back as a helper's answer, reads back the same, or is
/// refused for a value git cannot carry; Keyjar's own `state[]` values survive a round trip.
func fuzzGitCredential(_ bytes: [UInt8]) {
    let text = String(decoding: bytes, as: UTF8.self)
    let request: GitCredentialRequest
    do {
        request = try GitCredentialRequest.parse(text)
    } catch {
        let masked = maskingSecrets(text)
        do {
            _ = try GitCredentialRequest.parse(masked)
            fuzzCheck(false, "masking the secrets made the input valid")
        } catch let maskedError {
            fuzzCheck(maskedError.description == error.description, "a secret in an error")
        }
        return
    }
    _ = request.namesServer ? request.space : nil
    _ = "\(request)"

    var response = GitCredentialResponse(answering: request)
    response.username = request.username
    response.password = request.password
    response.passwordExpiryUTC = request.passwordExpiryUTC
    response.oauthRefreshToken = request.oauthRefreshToken
    response.authType = request.authType
    response.credential = request.authType == nil ? nil : request.credential
    response.ephemeral = request.ephemeral
    response.state = request.state
    response.multistage = request.multistage
    guard let written = try? response.encoded() else { return }
    do {
        let back = try GitCredentialRequest.parse(written)
        let carried = request.capabilities.contains(.authtype)
        let stated = request.capabilities.contains(.state)
        fuzzCheck(written.isEmpty || back.capabilities == request.capabilities, "capabilities changed")
        fuzzCheck(back.username == request.username && back.password == request.password, "user or password changed")
        fuzzCheck(back.passwordExpiryUTC == request.passwordExpiryUTC, "expiry changed")
        fuzzCheck(back.oauthRefreshToken == request.oauthRefreshToken, "refresh token changed")
        fuzzCheck(back.authType == (carried ? request.authType : nil), "authtype written without the capability")
        let credential = carried && request.authType != nil ? request.credential : nil
        fuzzCheck(back.credential == credential, "credential written without the capability")
        fuzzCheck(back.ephemeral == (carried && request.ephemeral), "ephemeral written without the capability")
        fuzzCheck(back.state == (stated ? request.state : []), "state written without the capability")
        fuzzCheck(back.multistage == (stated && request.multistage), "continue written without the capability")
    } catch {
        fuzzCheck(false, "an answer Keyjar wrote does not parse: \(error)")
    }
    for value in request.state {
        guard let state = GitCredentialState(decoding: value) else { continue }
        fuzzCheck(GitCredentialState(decoding: state.encoded) == state, "a state value does not round-trip")
    }
}

/// The input with each secret's value (password, refresh token, credential) replaced by as many
/// asterisks, lines split as the parser splits them (at line feeds); a NUL byte is kept, as it
/// alone makes a line invalid.
private func maskingSecrets(_ text: String) -> String {
    let secrets = ["password=", "oauth_refresh_token=", "credential="].map { Array($0.utf8) }
    let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
        let bytes = Array(line)
        guard let key = secrets.first(where: { bytes.starts(with: $0) }) else { return bytes }
        return key + bytes.dropFirst(key.count).map { $0 == 0 ? 0 : UInt8(ascii: "*") }
    }
    return String(decoding: Array(lines.joined(separator: [UInt8(ascii: "\n")])), as: UTF8.self)
}
