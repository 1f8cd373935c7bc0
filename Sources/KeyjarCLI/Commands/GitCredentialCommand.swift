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
        default: return
        }
    }

    /// git's lines from standard input, up to the blank line that ends them.
    static func readRequest() throws -> GitCredentialRequest {
        var lines: [String] = []
        while let line = Swift.readLine(strippingNewline: true), !line.isEmpty { lines.append(line) }
        do {
            return try GitCredentialRequest.parse(lines.joined(separator: "\n"))
        } catch {
            throw CLIError.usage(error.description)
        }
    }

    /// git waits for its helper before it asks its user: a keyjard that does not answer
    /// (stopped) fails a helper call after this long unless --timeout or KEYJAR_TIMEOUT say otherwise.
    static let timeout: Double = 5

    /// The user git names; `username=` with nothing after it names none.
    private static func user(_ request: GitCredentialRequest) -> String? {
        request.username.flatMap { $0.isEmpty ? nil : $0 }
    }

    private func get(_ request: GitCredentialRequest) throws {
        guard request.namesServer else { return }
        let client = try global.connect(defaultTimeout: Self.timeout)
        // With several users and no default, no answer: git then asks its user.
        guard let record = try client.credentialCandidates(for: request.space).answer(forUser: Self.user(request)),
            let password = try client.password(user: record.user, for: record.space)
        else { return }
        Output.line("username=\(record.user)\npassword=\(password)")
    }

    private func store(_ request: GitCredentialRequest) throws {
        // A credential without a user name could never be told apart or chosen: not stored.
        guard request.namesServer, let user = Self.user(request), let password = request.password, !password.isEmpty
        else { return }
        let client = try global.connect(defaultTimeout: Self.timeout)
        // keyjard makes a space's first credential its default.
        let space = try client.credentialCandidates(for: request.space).space(
            forStoring: user,
            challengedAt: request.space
        )
        try client.setCredential(user: user, password: password, for: space)
    }

    private func erase(_ request: GitCredentialRequest) throws {
        guard request.namesServer else {
            throw CLIError.failure(
                "refusing to erase: the request names no protocol and host, and an empty pattern would erase every credential."
            )
        }
        let client = try global.connect(defaultTimeout: Self.timeout)
        let candidates = try client.credentialCandidates(for: request.space).records
        for record in candidates where Self.user(request) == nil || record.user == Self.user(request) {
            // Only the password git saw fail: a newer one stored meanwhile stays.
            if let rejected = request.password, try client.password(user: record.user, for: record.space) != rejected {
                continue
            }
            try client.removeCredential(user: record.user, for: record.space)
        }
    }
}
