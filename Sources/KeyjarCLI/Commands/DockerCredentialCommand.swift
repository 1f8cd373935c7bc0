import ArgumentParser
import Foundation
import Keyjar
import KeyjarCodec
import KeyjarCommands
import KeyjarCore

/// `keyjar docker-credential store|get|erase|list|version`, installed as
/// `docker-credential-keyjar`: Docker's credential-helper protocol (``DockerCredentialFormat``)
/// on the shared credentials, so that `docker login` stores in Keyjar and `docker pull` finds
/// a registry password whichever program stored it.
struct DockerCredentialCommand: ParsableCommand {
    /// The name Docker runs for `"credsStore": "keyjar"` in ~/.docker/config.json.
    static let helperName = CommandMain.dockerHelperName

    static let configuration = CommandConfiguration(
        commandName: CommandMain.dockerHelperCommand,
        abstract: "Docker's credential helper on the shared credential storage.",
        discussion: """
            Docker runs it as docker-credential-keyjar with the operation as its argument: `store` \
            reads {"ServerURL", "Username", "Secret"} as JSON on standard input and stores the \
            credential for that registry (an https registry unless the URL says http), as its \
            default; `get` reads a server URL and prints the credential that answers there by \
            Keyjar's matching rule (one `keyjar credential add` stored too); `erase` removes that \
            credential; `list` prints, for each registry Docker's config.json records a login to, \
            the user whose credential answers there, as {"server": "user"}. Errors, and "credentials not found in native keychain", are \
            written to standard output with status 1, where Docker reads them.

            Set-up:
              ln -s "$(command -v keyjar)" ~/.local/bin/docker-credential-keyjar
              echo '{"credsStore": "keyjar"}' > ~/.docker/config.json
            (scripts/install makes the link.)

            Example:
              printf '%s' registry.example:5000 | keyjar docker-credential get
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(
        help: ArgumentHelp("store, get, erase, list or version (Docker passes it).", valueName: "operation"),
        completion: .list(["store", "get", "erase", "list", "version"])
    )
    var operation: String

    /// Docker gives a helper this long, at most, before it reports the registry unreachable.
    static let timeout: Double = 10

    func run() throws {
        do {
            switch operation {
            case "store": try store()
            case "get": try get()
            case "erase": try erase()
            case "list": try list()
            case "version": Output.line(CommandMain.version)
            default: throw CLIError.usage("unknown credential action `\(UserInput.shown(operation))`")
            }
        } catch {
            // Docker shows what the helper wrote on standard output, and knows status 1 only;
            // keyjar's own line goes to standard error as for every command.
            let message =
                switch error {
                case let error as CLIError: error.message
                case let error as KeyjarClientError: CLIError(error).message
                default: "\(error)"
                }
            Output.line(message)
            throw CLIError(message: message, status: .failure)
        }
    }

    private static func input() throws -> [UInt8] {
        Array(try StandardInput.readAll(for: "request"))
    }

    private static func server(_ serverURL: String) throws -> ProtectionSpace {
        guard let space = DockerCredentialFormat.space(forServerURL: serverURL) else {
            throw CLIError.usage("'\(UserInput.shown(serverURL))' names no registry (host or https URL)")
        }
        return space
    }

    private func connect() throws -> KeyjarClient { try global.connect(defaultTimeout: Self.timeout) }

    private func store() throws {
        let credential: DockerCredentialFormat.Credential
        do {
            credential = try DockerCredentialFormat.readCredential(try Self.input())
        } catch let error as DockerCredentialFormat.ReadError {
            throw CLIError.usage(error.description)
        }
        let space = try Self.server(credential.serverURL)
        let client = try connect()
        // Docker keeps one login per registry, the last: it becomes the registry's default, in
        // the credential of that user that answers there (git's and fetch's rule).
        let storing = try client.credentialCandidates(for: space).space(
            forStoring: credential.username,
            challengedAt: space
        )
        try client.setCredential(
            user: credential.username,
            password: credential.secret,
            for: storing,
            makeDefault: true
        )
    }

    /// The credential that answers at the registry, with its secret; nil when none does.
    private static func answering(
        _ space: ProtectionSpace,
        client: KeyjarClient
    ) throws -> (record: CredentialRecord, secret: String)? {
        let lookup = StoredCredentialLookup(spaces: [space], user: nil)
        // A `.netrc` `default` login would go to whatever registry an image names.
        // A client certificate's key is no registry password.
        guard let record = try lookup.answer(client: client), !record.space.isEveryServer,
            record.space.authenticationMethod.keepsSecret, record.space.authenticationMethod != .clientCertificate,
            let secret = try client.password(user: record.user, for: record.space)
        else { return nil }
        return (record, secret)
    }

    private func get() throws {
        let serverURL: String
        do {
            serverURL = try DockerCredentialFormat.readServerURL(try Self.input())
        } catch let error as DockerCredentialFormat.ReadError {
            throw CLIError.usage(error.description)
        }
        let space = try Self.server(serverURL)
        guard let (record, secret) = try Self.answering(space, client: try connect()) else {
            throw CLIError.failure(DockerCredentialFormat.notFound)
        }
        let answer = DockerCredentialFormat.Credential(serverURL: serverURL, username: record.user, secret: secret)
        Output.write(Data(DockerCredentialFormat.encode(answer)))
    }

    private func erase() throws {
        let serverURL: String
        do {
            serverURL = try DockerCredentialFormat.readServerURL(try Self.input())
        } catch let error as DockerCredentialFormat.ReadError {
            throw CLIError.usage(error.description)
        }
        let client = try connect()
        // `docker logout` ends the login Docker would use; a `.netrc` login answering every
        // server is not this registry's to end.
        guard let (record, _) = try Self.answering(try Self.server(serverURL), client: client),
            !record.space.isWildcard
        else {
            throw CLIError.failure(DockerCredentialFormat.notFound)
        }
        try client.removeCredential(user: record.user, for: record.space)
    }

    private func list() throws {
        // The registries Docker logged into (its config.json), each with the user whose
        // credential answers there now: never every site's login.
        let client = try connect()
        var entries: [(serverURL: String, username: String)] = []
        for serverURL in DockerCredentialFormat.loggedInRegistries(config: Self.dockerConfig()).sorted() {
            guard let space = DockerCredentialFormat.space(forServerURL: serverURL),
                let (record, _) = try Self.answering(space, client: client), !record.space.isWildcard
            else { continue }
            entries.append((serverURL, record.user))
        }
        Output.write(Data(DockerCredentialFormat.encode(list: entries)))
    }

    /// Docker's configuration: `$DOCKER_CONFIG/config.json`, else `~/.docker/config.json`; at
    /// most 1 MiB of it (empty when there is none).
    private static func dockerConfig() -> [UInt8] {
        let environment = ProcessInfo.processInfo.environment
        let directory =
            environment["DOCKER_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (environment["HOME"] ?? "") + "/.docker"
        guard let handle = FileHandle(forReadingAtPath: directory + "/config.json") else { return [] }
        defer { try? handle.close() }
        return Array((try? handle.read(upToCount: 1 << 20)) ?? Data())
    }
}
