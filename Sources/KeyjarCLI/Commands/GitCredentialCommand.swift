import ArgumentParser
import Foundation
import Keyjar
import KeyjarAuth
import KeyjarCore

/// `keyjar git-credential get|store|erase`: git's credential-helper protocol on the shared
/// credential storage, so git and every Keyjar program share one set of credentials.
struct GitCredentialCommand: ParsableCommand {
    /// The name git looks for on PATH for `credential.helper keyjar`.
    static let helperName = "git-credential-keyjar"

    static let configuration = CommandConfiguration(
        commandName: "git-credential",
        abstract: "A git credential helper backed by the shared credential storage.",
        discussion: """
            git writes key=value lines (protocol, host, path, username, password, url) on standard \
            input. `get` answers username= and password= from the store by Keyjar's matching rule \
            (see `keyjar help credential`): the named user's most specific credential for that \
            scheme, host and port (and the challenge's realm, when git passes it on), else the one \
            that answers unasked. `store` saves the credential permanently (password in the Secret \
            Service), updating the one that answered; a server's first credential becomes its \
            default. `erase` removes the matching credential (only when its password is the one \
            git rejected, when git names it), and refuses a request that names no host. Other \
            operations are ignored, as git asks of helpers.

            Set-up (either):
              git config --global credential.helper "$(command -v keyjar) git-credential"
            or
              ln -s "$(command -v keyjar)" ~/.local/bin/git-credential-keyjar
              git config --global credential.helper keyjar

            Example:
              printf 'protocol=https\\nhost=example.com\\n\\n' | keyjar git-credential get
            """
    )

    @OptionGroup var global: GlobalOptions

    // A string, not an enum: git may pass operations a helper must ignore (git-credential(1)).
    @Argument(
        help: ArgumentHelp("get, store or erase (git passes it).", valueName: "operation"),
        completion: .list(["get", "store", "erase"])
    )
    var operation: String

    func run() throws {
        switch operation {
        case "get": try get(Self.readRequest())
        case "store": try store(Self.readRequest())
        case "erase": try erase(Self.readRequest())
        // git-credential(1): helpers may answer git's capability query in its own format.
        case "capability": Output.write(Data(GitCredentialCapability.announcement.utf8))
        default: return
        }
    }

    /// git's lines from standard input, up to the blank line that ends them, as they came: the
    /// request parser alone splits them (at line feeds, as git does).
    static func readRequest() throws -> GitCredentialRequest {
        var text = ""
        while let line = Swift.readLine(strippingNewline: false), line != "\n", line != "\r\n" { text += line }
        do {
            return try GitCredentialRequest.parse(text)
        } catch {
            throw CLIError.usage(error.description)
        }
    }

    /// Writes the answer; a value git could not carry fails the helper (git then asks its
    /// user) rather than reaching git split or cut.
    static func answer(_ response: GitCredentialResponse) throws {
        do {
            Output.write(Data(try response.encoded().utf8))
        } catch {
            throw CLIError.failure("cannot answer git: \(error.description)")
        }
    }

    /// git waits for its helper before it asks its user: a keyjard that does not answer
    /// (stopped) fails a helper call after this long unless --timeout or KEYJAR_TIMEOUT say otherwise.
    static let timeout: Double = 5

    /// The user git names; `username=` with nothing after it names none.
    private static func user(_ request: GitCredentialRequest) -> String? {
        request.username.flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The stored credential Keyjar's `get` answered with, when git hands its state back and
    /// that credential is one of the request's server (and of the user git names, if any): a
    /// state value is only ever trusted to pick among what the request could reach anyway.
    private static func answeredCredential(_ request: GitCredentialRequest) -> GitCredentialState? {
        guard let state = request.keyjarState,
            CredentialChoice.specificity(of: state.space, for: request.space) != nil,
            user(request).map({ $0 == state.user }) ?? true
        else { return nil }
        return state
    }

    private func get(_ request: GitCredentialRequest) throws {
        guard request.namesServer else { return }
        let client = try global.connect(defaultTimeout: Self.timeout)
        // With several users and no default, no answer: git then asks its user.
        guard let record = try client.credentialCandidates(for: request.space).answer(forUser: Self.user(request)),
            let password = try client.password(user: record.user, for: record.space)
        else { return }
        var response = GitCredentialResponse(answering: request)
        response.username = record.user
        response.password = password
        // Names the credential for the store or erase that follows (only written when git
        // announced the state capability).
        response.state = [GitCredentialState(space: record.space, user: record.user).encoded]
        try Self.answer(response)
    }

    private func store(_ request: GitCredentialRequest) throws {
        // A credential without a user name could never be told apart or chosen: not stored.
        guard request.namesServer, let user = Self.user(request), let password = request.password, !password.isEmpty
        else { return }
        let client = try global.connect(defaultTimeout: Self.timeout)
        // The credential that answered, else the one of that user that answers here; keyjard
        // makes a space's first credential its default.
        let space: ProtectionSpace
        if let answered = Self.answeredCredential(request), answered.user == user {
            space = answered.space
        } else {
            space = try client.credentialCandidates(for: request.space).space(
                forStoring: user,
                challengedAt: request.space
            )
        }
        try client.setCredential(user: user, password: password, for: space)
    }

    private func erase(_ request: GitCredentialRequest) throws {
        guard request.namesServer else {
            throw CLIError.failure(
                "refusing to erase: the request names no protocol and host, and an empty pattern would erase every credential."
            )
        }
        let client = try global.connect(defaultTimeout: Self.timeout)
        // The credential that answered and failed, exactly; else every match of the request.
        let candidates: [(space: ProtectionSpace, user: String)]
        if let answered = Self.answeredCredential(request) {
            candidates = [(answered.space, answered.user)]
        } else {
            candidates = try client.credentialCandidates(for: request.space).records.filter {
                Self.user(request) == nil || $0.user == Self.user(request)
            }.map { ($0.space, $0.user) }
        }
        for (space, user) in candidates {
            // Only the password git saw fail: a newer one stored meanwhile stays.
            if let rejected = request.password, try client.password(user: user, for: space) != rejected {
                continue
            }
            try client.removeCredential(user: user, for: space)
        }
    }
}
