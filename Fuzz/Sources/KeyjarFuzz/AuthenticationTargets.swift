import Foundation
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

/// A token endpoint's answer to a refresh (RFC 6749 §5.1, §5.2): the first byte picks the
/// status, the rest is the body. Read or refused with a typed error, never a crash; neither
/// the refresh token sent nor a token in the body ever appears in a description or an error.
func fuzzOAuthTokenResponse(_ bytes: [UInt8]) {
    let statuses = [200, 400, 401, 403, 500, 502]
    let status = bytes.first.map { statuses[Int($0) % statuses.count] } ?? 200
    let body = Data(bytes.dropFirst())
    let sent = "Rt-7q2Ks9fuzz"
    guard let request = try? OAuthRefreshRequest(refreshToken: sent, clientID: "fuzz") else {
        return fuzzCheck(false, "a valid request was refused")
    }
    // The tokens the body carries, found by Foundation's JSON reader rather than the codec's;
    // only those that cannot be a piece of the fixed wording (which has digits only in
    // "HTTP 400", after a space): 8 characters or more, a digit, no space.
    let tokens = (secretsIn(body) + [sent]).filter {
        $0.count >= 8 && !$0.contains(" ") && $0.contains(where: \.isNumber)
    }
    do {
        let answer = try request.response(status: status, body: body)
        fuzzCheck(!answer.accessToken.isEmpty, "an empty access token")
        fuzzCheck(
            answer.accessToken.utf8.allSatisfy { (0x21...0x7E).contains($0) },
            "an access token a header cannot carry"
        )
        fuzzCheck(answer.tokenType.lowercased() == "bearer", "a token of another type")
        fuzzCheck(answer.expiresIn.map { $0.isFinite && $0 >= 0 } ?? true, "an expiry out of range")
        // By difference: other tokens, the same description.
        let other = OAuthTokenResponse(
            accessToken: "other",
            tokenType: answer.tokenType,
            expiresIn: answer.expiresIn,
            refreshToken: answer.refreshToken.map { _ in "other" },
            scope: answer.scope
        )
        fuzzCheck(answer.description == other.description, "a token in a description")
    } catch {
        for token in tokens {
            fuzzCheck(!error.description.contains(token), "a token in an error")
        }
    }
}

/// The string values of the `access_token` and `refresh_token` members of a JSON object.
private func secretsIn(_ body: Data) -> [String] {
    guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any] else { return [] }
    return ["access_token", "refresh_token"].compactMap { object[$0] as? String }
}
