import Foundation
import Glibc
import KeyjarCodec
import KeyjarCommands
import KeyjarCore
import KeyjarLibSecret
import KeyjarPlatform

/// What `keyjar credential import` reads from each source: netrc, git's store file, the
/// Secret Service items of git-credential-libsecret and of a named schema.
extension CredentialCommand.Import {
    // MARK: - Reading the source

    /// One credential of the source, or one it has that cannot be imported.
    struct Found {
        /// `FILE:LINE user at SPACE`, or the item; never a secret.
        var name: String
        var candidate: CredentialImportCandidate?
        /// Why it is not imported, when it is not.
        var skipped: String?
        /// Something said of it either way (a path that was ignored).
        var note = ""
    }

    func read() throws -> [Found] {
        let found =
            switch from {
            case .netrc: try readNetrc()
            case .gitStore: try readGitStore()
            case .gitCredentialLibsecret: try readGitLibsecret()
            case .secretTool: try readSecretTool(schema: schema ?? "")
            }
        // A credential needs a user name, as everywhere in keyjar (`git-credential store`
        // does not store `username=` with no name either); git's files may have one without.
        return found.map { item in
            guard item.candidate?.user.isEmpty == true else { return item }
            var skipped = item
            skipped.candidate = nil
            skipped.skipped = "no user name"
            return skipped
        }
    }

    func readNetrc() throws -> [Found] {
        let environment = ProcessInfo.processInfo.environment
        let path =
            file ?? environment["NETRC"].flatMap { $0.isEmpty ? nil : $0 } ?? XDGDirectories().home + "/.netrc"
        let entries: [NetrcFile.Entry]
        do {
            entries = try NetrcFile.parse(try Self.text(of: path))
        } catch let error as NetrcFile.ParseError {
            throw CLIError.failure("\(path): \(error); nothing was imported.")
        }
        return entries.map { entry in
            let origin = "\(path):\(entry.line)"
            let space: ProtectionSpace
            switch entry.host {
            case .machine(let name): space = ProtectionSpace(anySchemeAndPortOf: name, inClearToo: allowUnencrypted)
            case .default: space = .anyServer(inClearToo: allowUnencrypted)
            }
            var found = Found(name: "\(origin) \(entry.login ?? "(no login)") at \(Self.describe(space))")
            if case .default = entry.host, !includeDefault {
                found.skipped = "a default entry: --include-default imports it"
            } else if let login = entry.login, let password = entry.password {
                found.note = Self.limit(of: space)
                found.candidate = CredentialImportCandidate(
                    origin: origin,
                    space: space,
                    user: login,
                    password: password
                )
            } else {
                found.skipped = entry.login == nil ? "no login" : "no password"
            }
            return found
        }
    }

    func readGitStore() throws -> [Found] {
        var paths: [String]
        if let file {
            paths = [file]
        } else {
            // git credential-store's own order (git-credential-store(1), FILES).
            let directories = XDGDirectories()
            paths = [directories.home + "/.git-credentials", directories.configHome + "/git/credentials"]
            paths = paths.filter { FileManager.default.fileExists(atPath: $0) }
            if paths.isEmpty {
                throw CLIError.failure(
                    "there is no ~/.git-credentials nor $XDG_CONFIG_HOME/git/credentials: name the file to import."
                )
            }
        }
        var found: [Found] = []
        for path in paths {
            let entries: [GitCredentialsFile.Entry]
            do {
                entries = try GitCredentialsFile.parse(try Self.text(of: path))
            } catch let error as GitCredentialsFile.ParseError {
                throw CLIError.failure("\(path): \(error); nothing was imported.")
            }
            for entry in entries {
                let origin = "\(path):\(entry.line)"
                let space = ProtectionSpace(host: entry.host, port: entry.port, protocol: entry.protocol)
                found.append(
                    Found(
                        name: "\(origin) \(entry.user) at \(Self.describe(space))",
                        candidate: CredentialImportCandidate(
                            origin: origin,
                            space: space,
                            user: entry.user,
                            password: entry.password
                        ),
                        note: entry.path.map { "path \($0) ignored: credentials are per server" } ?? ""
                    )
                )
            }
        }
        return found
    }

    func readGitLibsecret() throws -> [Found] {
        try Self.items(ofSchema: GitLibsecretItem.schema).map { item in
            let read: GitLibsecretItem
            do {
                switch try GitLibsecretItem.read(attributes: item.attributes, secret: item.secret) {
                case .credential(let credential): read = credential
                // git's own (a certificate's passphrase): the user has nothing to fix.
                case .other(let name, let reason): return Found(name: "item \(name)", skipped: reason)
                }
            } catch {
                throw CLIError.failure("\(error); nothing was imported.")
            }
            let space = ProtectionSpace(host: read.server, port: read.port, protocol: read.protocol)
            let origin = "item \(read)"
            return Found(
                name: "\(origin) at \(Self.describe(space))",
                candidate: CredentialImportCandidate(
                    origin: origin,
                    space: space,
                    user: read.user,
                    password: read.password,
                    expires: read.expires,
                    refreshToken: read.refreshToken
                ),
                note: read.path.map { "path \($0) ignored: credentials are per server" } ?? ""
            )
        }
    }

    func readSecretTool(schema: String) throws -> [Found] {
        try Self.items(ofSchema: schema).map { item in
            let attributes = item.attributes
            let shown = attributes.filter { $0.key != "xdg:schema" }.sorted { $0.key < $1.key }
                .map { "\($0.key)=\($0.value)" }.joined(separator: " ")
            let origin = "item \(shown)"
            guard let server = attributes["server"], !server.isEmpty, let user = attributes["user"] else {
                throw CLIError.failure(
                    "\(origin) of schema \(schema) has no server or no user attribute: which credential it is "
                        + "would be a guess; nothing was imported."
                )
            }
            let scheme = attributes["protocol"].flatMap { $0.isEmpty ? nil : $0 }
            let portText = attributes["port"].flatMap { $0.isEmpty || $0 == "0" ? nil : $0 }
            let port = portText.flatMap(Int.init)
            guard portText == nil || (port != nil && scheme != nil) else {
                throw CLIError.failure(
                    "\(origin) of schema \(schema) has a port but no protocol, or a port that is not a number: "
                        + "nothing was imported."
                )
            }
            let space =
                scheme.map { ProtectionSpace(host: server, port: port, protocol: $0) }
                ?? ProtectionSpace(anySchemeAndPortOf: server, inClearToo: allowUnencrypted)
            return Found(
                name: "\(origin) at \(Self.describe(space))",
                candidate: CredentialImportCandidate(
                    origin: origin,
                    space: space,
                    user: user,
                    password: item.secret
                ),
                note: Self.limit(of: space)
            )
        }
    }

    /// The items of a schema; the Secret Service's failure (a locked keyring) as the command's.
    static func items(ofSchema schema: String) throws -> [SecretServiceItem] {
        do {
            return try SecretServiceItems.items(ofSchema: schema)
        } catch {
            let detail = error.message ?? "no reason given"
            switch error.kind {
            case .locked:
                throw CLIError.failure(
                    "items of schema \(schema) are in a locked keyring that was not unlocked (its prompt was "
                        + "dismissed or could not be shown): unlock it (Seahorse, or gnome-keyring-daemon --unlock) "
                        + "and retry; nothing was imported. (\(detail))"
                )
            case .serviceUnavailable:
                throw CLIError.failure(
                    "no Secret Service answers on the session bus, so the items of schema \(schema) cannot be "
                        + "read: start gnome-keyring-daemon (or the Secret Service that holds them) and retry; "
                        + "nothing was imported. (\(detail))"
                )
            case .invalidInput, .failed:
                throw CLIError.failure("the Secret Service failed: \(detail); nothing was imported.")
            }
        }
    }

    // MARK: - Files and words

    /// A source file's text, or an error that names it and says why.
    static func text(of path: String) throws(CLIError) -> String {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw .failure("cannot read \(path): it is a directory; nothing was imported.")
        }
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw .failure("cannot read \(path): \(String(cString: strerror(errno))); nothing was imported.")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.readToEnd() ?? Data()
        } catch {
            let number = (error as NSError).domain == NSPOSIXErrorDomain ? Int32((error as NSError).code) : EIO
            throw .failure("cannot read \(path): \(String(cString: strerror(number))); nothing was imported.")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw .failure("\(path) is not UTF-8 text; nothing was imported.")
        }
        return text
    }
}
