import ArgumentParser
import Foundation
import Keyjar
import KeyjarAuth
import KeyjarCore
import KeyjarProtocol

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

    @Argument(help: ArgumentHelp("get, store or erase (git passes it).", valueName: "operation"))
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

    private func get(_ request: GitCredentialRequest) throws {
        guard request.namesServer else { return }
        let client = try global.connect()
        let choice = try choose(client, for: request)
        // The named user's most specific credential; else the one Keyjar's matching rule lets
        // answer unasked (with several users and no default, none: git then asks its user).
        let answer: CredentialRecord?
        if let user = request.username {
            answer = choice.candidates.first { $0.user == user }
        } else {
            answer = choice.preferred
        }
        guard let record = answer,
            case .password(let password?) = try client.request(.password(space: record.space, user: record.user))
        else { return }
        Output.line("username=\(record.user)\npassword=\(password)")
    }

    private func store(_ request: GitCredentialRequest) throws {
        guard request.namesServer, let user = request.username, let password = request.password else { return }
        let client = try global.connect()
        // The credential that answered (the user's most specific for this challenge) is
        // updated rather than doubled by one in another space; keyjard makes a space's first
        // credential its default.
        let answered = try choose(client, for: request).candidates.first { $0.user == user }
        let space = answered?.space ?? request.space
        _ = try client.request(.setCredential(space: space, user: user, password: password, makeDefault: false))
    }

    private func erase(_ request: GitCredentialRequest) throws {
        guard request.namesServer else {
            throw CLIError.failure(
                "refusing to erase: the request names no protocol and host, and an empty pattern would erase every credential.")
        }
        let client = try global.connect()
        for record in try choose(client, for: request).candidates where request.username == nil || record.user == request.username {
            if let rejected = request.password {
                // Only the password git saw fail: a newer one stored meanwhile stays.
                guard case .password(let stored) = try client.request(.password(space: record.space, user: record.user)),
                    stored == rejected
                else { continue }
            }
            _ = try client.request(.removeCredential(space: record.space, user: record.user))
        }
    }

    /// The stored credentials that may answer git's request, by Keyjar's matching rule (keyjard
    /// applies it): the challenge's realm and scheme when git passes them on, else any of the
    /// server's.
    private func choose(_ client: KeyjarClient, for request: GitCredentialRequest) throws -> (
        candidates: [CredentialRecord], preferred: CredentialRecord?
    ) {
        let response = try client.request(.credentialChoice(space: request.space))
        guard case .credentialChoice(let candidates, let preferred) = response else { throw unexpected(response) }
        return (candidates, preferred)
    }
}
