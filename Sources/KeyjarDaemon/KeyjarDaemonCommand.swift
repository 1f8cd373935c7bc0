import ArgumentParser
import CProcessControl
import Foundation
import Glibc
import KeyjarCore
import KeyjarProtocol
import KeyjarServer
import Logging

/// keyjard: the per-user service that holds every cookie, credential and policy of a user.
@main
struct KeyjarDaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keyjard",
        abstract: "Serve the shared cookie and credential store of this user.",
        discussion: """
            Runs in the foreground and logs to standard error; prints "ready <socket>" on standard \
            output once clients can connect. SIGTERM or SIGINT stops it cleanly: session cookies are \
            dropped (a clean stop is the end of the login session; after a crash they are kept), the \
            database is checkpointed and the socket removed. SIGHUP stops it the same way for a \
            restart (an upgrade): the login session goes on, and session cookies are kept for the \
            next keyjard, which a client or systemd starts. Under systemd socket activation \
            (LISTEN_FDS) it serves the socket it is given.

            Defaults: socket $KEYJAR_SOCKET or $XDG_RUNTIME_DIR/keyjar/keyjar.sock; database \
            $KEYJAR_DATABASE or $XDG_DATA_HOME/keyjar/store.sqlite3 (~/.local/share/keyjar/...).
            """,
        version: KeyjarServer.version
    )

    enum SecretsBackend: String, ExpressibleByArgument, CaseIterable {
        case auto
        case secretService = "secret-service"
        case file
        case encrypted
    }

    @Option(help: ArgumentHelp("The Unix socket to serve.", valueName: "path"))
    var socket: String?

    @Option(help: ArgumentHelp("The SQLite database file.", valueName: "path"))
    var database: String?

    @Option(
        help: ArgumentHelp(
            """
            Where passwords go: secret-service, encrypted (a 0600 file sealed under a passphrase, \
            opened by keyjar unlock), file (weaker: a 0600 plain-text file) or auto. Default: \
            $KEYJAR_SECRETS, else auto: where the database records them, or at its first start \
            the Secret Service if it has a collection to use, else encrypted. KEYJAR_SECRETS \
            gives way to the record while credentials are stored; --secrets does not.
            """,
            valueName: "backend"
        )
    )
    var secrets: SecretsBackend?

    /// `--secrets`, else `KEYJAR_SECRETS`, else auto.
    private var chosenSecrets: SecretsBackend {
        secrets ?? ProcessInfo.processInfo.environment["KEYJAR_SECRETS"].flatMap(SecretsBackend.init(rawValue:))
            ?? .auto
    }

    @Option(
        help: ArgumentHelp(
            """
            The file for --secrets file or encrypted (default: beside the database, secrets.json \
            or secrets.sealed).
            """,
            valueName: "path"
        )
    )
    var secretsFile: String?

    @Option(
        help: ArgumentHelp(
            """
            Lock the encrypted secrets file once no secret has been read or stored for this long \
            (90s, 15m, 2h, 1d; 0 never), when keyjar unlock does not say. Default: \
            $KEYJAR_LOCK_AFTER_IDLE, else 0.
            """,
            valueName: "duration"
        )
    )
    var lockAfterIdle: String =
        ProcessInfo.processInfo.environment["KEYJAR_LOCK_AFTER_IDLE"].flatMap {
            $0.isEmpty ? nil : $0
        } ?? "0"

    @Option(help: ArgumentHelp("The largest frame accepted from a client, in bytes.", visibility: .hidden))
    var maxFrameBytes: Int = Framing.defaultMaximumPayload

    @Option(
        help: ArgumentHelp("Messages queued for one client before it is disconnected as stuck.", visibility: .hidden)
    )
    var clientQueueLimit: Int = 4096

    @Option(help: ArgumentHelp("Bytes queued for one client before it is disconnected as stuck.", visibility: .hidden))
    var clientQueueBytes: Int = 16 * 1024 * 1024

    @Option(
        help: ArgumentHelp(
            "Bytes that incoming frames over 64 KiB may hold at once, over all clients (default: what the largest frame needs, 128 MiB).",
            valueName: "bytes"
        )
    )
    var maxInboundBytes: Int?

    @Option(help: ArgumentHelp("Clients served at once; more are refused (default: 512).", valueName: "n"))
    var maxConnections: Int = 512

    @Option(
        help: ArgumentHelp(
            "Clients served at once from one process (by its pid); more from it are refused (default: 256).",
            valueName: "n"
        )
    )
    var maxConnectionsPerProcess: Int = 256

    @Option(help: ArgumentHelp("Seconds a connection may take to say hello before it is closed.", visibility: .hidden))
    var helloDeadline: Int = 10

    @Option(help: ArgumentHelp("Seconds a large frame may take to arrive once begun.", visibility: .hidden))
    var frameDeadline: Int = 30

    @Option(
        help: ArgumentHelp(
            "Cookies kept in all before the least valuable are evicted (default, as Chromium: 3300).",
            valueName: "n"
        )
    )
    var maxCookies: Int = CookieJar.Limits().total

    @Option(
        help: ArgumentHelp(
            "Cookies kept per site (registrable domain) before eviction (default, as Chromium: 180).",
            valueName: "n"
        )
    )
    var maxCookiesPerSite: Int = CookieJar.Limits().perSite

    @Option(help: ArgumentHelp("Seconds between two sweeps of expired cookies.", visibility: .hidden))
    var expiryInterval: Int = 60

    @Option(
        help: ArgumentHelp(
            "trace, debug, info, notice, warning, error or critical (default: info).",
            valueName: "level"
        )
    )
    var logLevel: String = "info"

    func validate() throws {
        if let given = ProcessInfo.processInfo.environment["KEYJAR_SECRETS"], !given.isEmpty,
            SecretsBackend(rawValue: given) == nil
        {
            throw ValidationError("KEYJAR_SECRETS is '\(given)'; it takes auto, secret-service, encrypted or file.")
        }
        if DurationText.seconds(lockAfterIdle) == nil {
            throw ValidationError(
                "--lock-after-idle (or KEYJAR_LOCK_AFTER_IDLE) is '\(lockAfterIdle)'; it takes a duration such as 90s, 15m, 2h or 0"
            )
        }
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("unknown log level '\(logLevel)'")
        }
        if secretsFile != nil && (chosenSecrets == .secretService || chosenSecrets == .auto) {
            throw ValidationError("--secrets-file needs --secrets file or --secrets encrypted")
        }
        guard maxFrameBytes >= 1024 else { throw ValidationError("--max-frame-bytes must be at least 1024") }
        guard clientQueueLimit >= 1 else { throw ValidationError("--client-queue-limit must be at least 1") }
        guard clientQueueBytes >= 1024 else { throw ValidationError("--client-queue-bytes must be at least 1024") }
        let minimumInbound = ServerConfiguration.minimumInboundBudget(maximumFramePayload: maxFrameBytes)
        if let maxInboundBytes, maxInboundBytes < minimumInbound {
            throw ValidationError(
                "--max-inbound-bytes must hold the buffer of one largest frame: at least \(minimumInbound)"
            )
        }
        guard maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1") }
        guard maxConnectionsPerProcess >= 1 else {
            throw ValidationError("--max-connections-per-process must be at least 1")
        }
        guard helloDeadline >= 1 else { throw ValidationError("--hello-deadline must be at least 1 second") }
        guard frameDeadline >= 1 else { throw ValidationError("--frame-deadline must be at least 1 second") }
        guard maxCookies >= 1, maxCookiesPerSite >= 1 else { throw ValidationError("cookie limits must be at least 1") }
        guard expiryInterval >= 1 else { throw ValidationError("--expiry-interval must be at least 1 second") }
    }

    func run() async throws {
        // Everything keyjard creates (database, WAL, secrets file, socket) is for this user only.
        umask(0o077)
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "keyjard")
        // keyjard holds the passwords it serves in memory: no core file of it, and no other
        // process of the user may trace it or read its memory (only root may).
        if keyjar_set_not_dumpable() == 0 {
            logger.info("not dumpable: no core file; no other process of the user can trace it or read its memory")
        } else {
            logger.warning("could not make keyjard non-dumpable: \(String(cString: strerror(errno)))")
        }
        let databasePath = database.map { KeyjarPaths.absolute($0) } ?? KeyjarPaths.defaultDatabasePath()
        // Eviction keeps Chromium's proportions: per site down to 5/6, in all 300 at a time (or 10%).
        let limits = CookieJar.Limits(
            perSite: maxCookiesPerSite,
            perSitePurgedTo: max(1, maxCookiesPerSite * 5 / 6),
            total: maxCookies,
            totalPurge: max(1, min(300, maxCookies / 10))
        )
        var configuration = ServerConfiguration(
            socketPath: socket.map { KeyjarPaths.absolute($0) } ?? KeyjarPaths.defaultSocketPath(),
            databasePath: databasePath,
            maximumFramePayload: maxFrameBytes,
            inboundBudget: maxInboundBytes,
            maximumConnections: maxConnections,
            frameDeadline: .seconds(frameDeadline),
            clientQueueLimit: clientQueueLimit,
            clientQueueBytes: clientQueueBytes,
            limits: limits
        )
        configuration.expiryInterval = .seconds(expiryInterval)
        configuration.maximumConnectionsPerProcess = maxConnectionsPerProcess
        configuration.helloDeadline = .seconds(helloDeadline)
        configuration.secretsFromEnvironment = secrets == nil
        switch chosenSecrets {
        case .auto: configuration.secrets = nil
        case .secretService: configuration.secrets = .secretService
        case .file:
            configuration.secrets = .file(
                path: secretsFile.map { KeyjarPaths.absolute($0) }
                    ?? ServerConfiguration.plainSecretsFile(besideDatabase: databasePath)
            )
        case .encrypted:
            configuration.secrets = .encrypted(
                path: secretsFile.map { KeyjarPaths.absolute($0) }
                    ?? ServerConfiguration.encryptedSecretsFile(besideDatabase: databasePath)
            )
        }
        if let seconds = DurationText.seconds(lockAfterIdle), seconds > 0 {
            configuration.lockAfterIdle = .seconds(seconds)
        }
        configuration.inheritedSocket = Self.systemdSocket()

        let (stops, trigger) = AsyncStream.makeStream(of: KeyjarServer.Stop.self)
        let signals = [(SIGTERM, KeyjarServer.Stop.endOfSession), (SIGINT, .endOfSession), (SIGHUP, .restart)].map {
            number,
            stop in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number)
            source.setEventHandler { trigger.yield(stop) }
            source.resume()
            return source
        }
        defer { for signal in signals { signal.cancel() } }

        do {
            try await KeyjarServer.run(configuration: configuration, logger: logger, stops: stops) { socketPath in
                // Written straight to the file descriptor: the line must not wait in a buffer.
                try? FileHandle.standardOutput.write(contentsOf: Data("ready \(socketPath)\n".utf8))
            }
        } catch let error as ServerError {
            try? FileHandle.standardError.write(contentsOf: Data("keyjard: \(error.message)\n".utf8))
            throw ExitCode.failure
        }
    }

    /// The listening socket systemd passed (LISTEN_PID is us and LISTEN_FDS is 1), if any.
    static func systemdSocket() -> CInt? {
        let environment = ProcessInfo.processInfo.environment
        guard environment["LISTEN_PID"].flatMap(Int32.init) == getpid(), environment["LISTEN_FDS"] == "1" else {
            return nil
        }
        unsetenv("LISTEN_PID")
        unsetenv("LISTEN_FDS")
        unsetenv("LISTEN_FDNAMES")
        return 3  // SD_LISTEN_FDS_START
    }
}
