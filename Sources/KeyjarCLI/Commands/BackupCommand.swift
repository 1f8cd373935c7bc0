import ArgumentParser
import Foundation
import Glibc
import Keyjar
import KeyjarBackup
import KeyjarCommands
import KeyjarCore

/// `keyjar backup FILE`: every cookie, the policy, every credential with its password, in one
/// file encrypted under a passphrase (KeyjarBackup's format).
struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup",
        abstract: "Write the whole store, passwords included, to one file encrypted under a passphrase.",
        discussion: """
            The file holds every cookie, the accept policy and domain rules, and every credential \
            with its password and refresh token, encrypted (AES-256-GCM under a key scrypt derives \
            from the passphrase); nothing in it is readable without the passphrase, and a changed \
            or cut-off file is refused whole. It is written as a new file renamed into place, \
            readable by you only (0600). `keyjar restore` reads it back, on this machine or another.

            The passphrase is asked for twice on the terminal, or read from standard input with \
            --passphrase-stdin. A credential whose password is missing (`keyjar status` lists \
            them) is left out and said so.

            Examples:
              keyjar backup ~/keyjar.backup
              keyjar restore ~/keyjar.backup
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The file to write ('-' for standard output).")
    var file: String

    @Flag(help: "Read the passphrase from standard input instead of the terminal.")
    var passphraseStdin = false

    func run() throws {
        let target = try OutputFile.resolve(file, in: FileManager.default.currentDirectoryPath)
        let passphrase = try Passphrase.read(fromStandardInput: passphraseStdin, confirming: true)
        let client = try global.connect()
        let policy = try client.policy()
        let records = try client.credentialRecords()
        let cookies = try client.cookies()
        var left: [CredentialRecord] = []
        var written = 0
        try target.writePrivately(named: file) { write in
            var backup = try BackupWriter(passphrase: passphrase)
            try write(backup.header)
            try write(try backup.add(.policy(policy)))
            for cookie in cookies { try write(try backup.add(.cookie(cookie))) }
            // One credential's secrets at a time, never all of them at once.
            for record in records {
                let secrets = try Self.secrets(of: record, from: client)
                guard let secrets else {
                    left.append(record)
                    continue
                }
                let credential = BackedUpCredential(record: record, password: secrets.0, refreshToken: secrets.1)
                try write(try backup.add(.credential(credential)))
                written += 1
            }
            try write(try backup.finish())
        }
        for record in left {
            Output.error("left out (its password is missing): \(record.space.summary) user \(record.user)")
        }
        let summary =
            "backed up \(cookies.count) cookie\(cookies.count == 1 ? "" : "s"), \(written) credential\(written == 1 ? "" : "s")"
            + " and \(policy.domainRules.count) domain rule\(policy.domainRules.count == 1 ? "" : "s")"
        if file == "-" { Output.error(summary) } else { Output.line(summary) }
    }

    /// The password and refresh token of `record`; nil when its password is missing.
    private static func secrets(of record: CredentialRecord, from client: KeyjarClient) throws -> (String, String?)? {
        guard record.space.authenticationMethod.keepsSecret else { return ("", nil) }
        guard let password = try client.password(user: record.user, for: record.space) else { return nil }
        let refreshToken = record.hasRefreshToken ? try client.refreshToken(user: record.user, for: record.space) : nil
        return (password, refreshToken)
    }
}

/// `keyjar restore FILE`: a backup merged into the running store, the newer of each item kept.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore",
        abstract: "Merge a backup into the store: the newer of each cookie and credential wins.",
        discussion: """
            Each cookie and credential of the backup is stored unless the store has a newer one \
            of the same identity (a cookie used later, a credential saved or used later); the \
            backup's domain rules are added where the store has none for the domain, and the \
            accept policy stays the store's. Nothing else in the store is touched. A file is \
            checked whole (the passphrase, then every chunk) before anything is stored.

            The passphrase is asked for on the terminal, or read from standard input with \
            --passphrase-stdin.

            Examples:
              keyjar restore ~/keyjar.backup
              ssh old-machine keyjar backup - --passphrase-stdin < pass > keyjar.backup
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: "The backup to read ('-' for standard input).")
    var file: String

    @Flag(help: "Read the passphrase from standard input instead of the terminal.")
    var passphraseStdin = false

    func validate() throws {
        if file == "-" && passphraseStdin {
            throw ValidationError("the backup and the passphrase cannot both come from standard input.")
        }
    }

    func run() throws {
        let source = try BackupSource(file)
        let passphrase = try Passphrase.read(fromStandardInput: passphraseStdin, confirming: false)
        // A file is checked whole first: a damaged backup stores nothing.
        if source.canBeReadTwice {
            var check = try BackupReader(passphrase: passphrase, read: try source.reader())
            while try check.next() != nil {}
        }
        var backup = try BackupReader(passphrase: passphrase, read: try source.reader())
        let client = try global.connect()
        var restore = try StoreRestore(client: client)
        while let item = try backup.next() { try restore.add(item) }
        try restore.finish()
        Output.line(restore.report)
    }
}

/// What restore stores, in batches, the newer of each item kept (BackupMerge).
private struct StoreRestore {
    let client: KeyjarClient
    var cookies: [Cookie.Identity: Cookie]
    var records: [String: CredentialRecord]
    var defaultSpaces: Set<ProtectionSpace>
    var pendingCookies: [Cookie] = []
    var pendingCredentials: [CredentialWrite] = []
    var counts = (cookies: 0, cookiesKept: 0, cookiesRefused: 0, credentials: 0, credentialsKept: 0, rules: 0)

    init(client: KeyjarClient) throws {
        self.client = client
        cookies = Dictionary(try client.cookies().map { ($0.identity, $0) }, uniquingKeysWith: { first, _ in first })
        let stored = try client.credentialRecords()
        records = Dictionary(stored.map { (Self.key($0.space, $0.user), $0) }, uniquingKeysWith: { first, _ in first })
        defaultSpaces = Set(stored.filter(\.isDefault).map(\.space))
    }

    static func key(_ space: ProtectionSpace, _ user: String) -> String {
        "\(space.host)\u{0}\(space.port)\u{0}\(space.protocol)\u{0}\(space.realm ?? "")\u{0}"
            + "\(space.authenticationMethod.rawValue)\u{0}\(space.proxyType.rawValue)\u{0}\(user)"
    }

    mutating func add(_ item: BackupItem) throws {
        switch item {
        case .policy(let backedUp):
            let current = try client.policy()
            let merged = BackupMerge.policy(backedUp, into: current)
            counts.rules = merged.domainRules.count - current.domainRules.count
            if merged != current { try client.setPolicy(merged) }
        case .cookie(let cookie):
            guard BackupMerge.restores(cookie, over: cookies[cookie.identity]) else {
                counts.cookiesKept += 1
                return
            }
            pendingCookies.append(cookie)
            if pendingCookies.count >= 2_000 { try flushCookies() }
        case .credential(let credential):
            let record = credential.record
            guard BackupMerge.restores(record, over: records[Self.key(record.space, record.user)]) else {
                counts.credentialsKept += 1
                return
            }
            pendingCredentials.append(
                CredentialWrite(
                    space: record.space,
                    user: record.user,
                    password: credential.password,
                    makeDefault: record.isDefault && !defaultSpaces.contains(record.space),
                    expires: record.expires,
                    refreshToken: credential.refreshToken,
                    tokenRefresh: credential.refreshToken == nil ? nil : record.tokenRefresh
                )
            )
            if record.isDefault { defaultSpaces.insert(record.space) }
            if pendingCredentials.count >= 100 { try flushCredentials() }
        case .end:
            break
        }
    }

    mutating func finish() throws {
        try flushCookies()
        try flushCredentials()
    }

    private mutating func flushCookies() throws {
        guard !pendingCookies.isEmpty else { return }
        let outcomes = try client.insertCookies(pendingCookies)
        let stored = outcomes.filter { $0 == .stored }.count
        counts.cookies += stored
        counts.cookiesRefused += outcomes.count - stored
        pendingCookies.removeAll(keepingCapacity: true)
    }

    private mutating func flushCredentials() throws {
        guard !pendingCredentials.isEmpty else { return }
        try client.saveCredentials(pendingCredentials)
        counts.credentials += pendingCredentials.count
        pendingCredentials.removeAll(keepingCapacity: true)
    }

    var report: String {
        var parts = ["restored \(counts.cookies) cookie\(counts.cookies == 1 ? "" : "s")"]
        if counts.cookiesKept > 0 { parts.append("kept \(counts.cookiesKept) not older here") }
        if counts.cookiesRefused > 0 { parts.append("\(counts.cookiesRefused) refused (expired or invalid)") }
        var line = parts.joined(separator: ", ")
        line += "; \(counts.credentials) credential\(counts.credentials == 1 ? "" : "s")"
        if counts.credentialsKept > 0 { line += ", kept \(counts.credentialsKept) not older here" }
        line += "; \(counts.rules) domain rule\(counts.rules == 1 ? "" : "s") added"
        return line
    }
}

/// Where restore reads from: a file (read twice: checked whole, then stored) or standard input.
private struct BackupSource {
    let path: String?

    init(_ given: String) throws {
        guard given != "-" else {
            path = nil
            return
        }
        var info = stat()
        guard stat(given, &info) == 0 else {
            throw CLIError.failure("cannot read \(given): \(String(cString: strerror(errno))).")
        }
        guard info.st_mode & S_IFMT == S_IFREG else { throw CLIError.failure("cannot read \(given): not a file.") }
        path = given
    }

    var canBeReadTwice: Bool { path != nil }

    /// Reads up to the count asked for, fewer only at the end.
    func reader() throws -> (Int) throws -> [UInt8] {
        let descriptor = path.map { open($0, O_RDONLY | O_CLOEXEC) } ?? STDIN_FILENO
        guard descriptor >= 0 else {
            throw CLIError.failure("cannot read \(path ?? "-"): \(String(cString: strerror(errno))).")
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: path != nil)
        return { count in
            var bytes: [UInt8] = []
            while bytes.count < count {
                guard let more = try handle.read(upToCount: count - bytes.count), !more.isEmpty else { break }
                bytes += more
            }
            return bytes
        }
    }
}

/// The passphrase of a backup, read as a password is: never an argument.
private enum Passphrase {
    static func read(fromStandardInput: Bool, confirming: Bool) throws -> String {
        try PasswordInput.passphrase(standardInput: fromStandardInput, prompt: "Passphrase: ", confirming: confirming)
    }
}
