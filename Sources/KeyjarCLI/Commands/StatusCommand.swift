import ArgumentParser
import Foundation
import Keyjar
import KeyjarCodec
import KeyjarCommands
import KeyjarCore

/// `keyjar status`: whether keyjard answers, where it keeps things, and how its parts are.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show whether keyjard is reachable, its paths, counts, secrets backend and accept policy.",
        discussion: """
            Exits with status 3 when keyjard cannot be reached (with --no-start, when none is serving).

            Examples:
              keyjar status
              keyjar status --json | jq .cookieCount
              keyjar status --no-start || echo "keyjard is not running"
            """
    )

    @OptionGroup var global: GlobalOptions

    @Flag(help: "Print the status as a JSON object.")
    var json = false

    func run() throws {
        let status: ServiceStatus
        do {
            let client = try global.connect()
            do {
                status = try client.status()
            } catch {
                throw CLIError(error)
            }
        } catch let error as CLIError where error.status == .unreachable && json {
            // Scripts read `reachable` from the object, so it is printed in this case too.
            Output.line(Output.json(UnreachableJSON(socketPath: global.socketPath, error: error.message).json))
            throw error
        }
        // Reached elsewhere than asked: nothing listened at this shell's socket, and the keyjard
        // that serves the same database was found through its pointer beside the database.
        let askedSocket = global.socketPath
        let reachedElsewhere = status.socketPath != askedSocket
        if json {
            var object = StatusJSON(status)
            object.requestedSocketPath = askedSocket
            Output.line(Output.json(object.json))
            return
        }
        let secrets = status.secretsHealthy ? "healthy" : "NOT USABLE"
        let why =
            reachedElsewhere
            ? " (nothing listens at \(askedSocket); this keyjard serves the same database, found through "
                + "\(KeyjarPaths.databasePointer(forDatabase: status.databasePath)))" : ""
        Output.line(
            """
            keyjard: reachable (version \(status.version), protocol \(status.protocolVersion), pid \(status.pid))
            socket: \(status.socketPath)\(why)
            database: \(status.databasePath) (schema version \(status.schemaVersion))
            cookies: \(status.cookieCount)
            credentials: \(status.credentialCount)
            secrets: \(status.secretsBackend), \(secrets): \(status.secretsDetail)\(status.secretsLock.map { "\nsecrets file: " + Self.describe($0) } ?? "")
            accept policy: \(AcceptPolicyArgument(status.acceptPolicy).rawValue)
            sequence: \(status.sequence)
            clients: \(status.connectedClients)\(status.inbound.map { " (at most \($0.maximumConnections))" } ?? "")
            """
        )
        switch status.credentialMismatches {
        case nil:
            Output.line("credentials and passwords: not compared (the secret store cannot be read)")
        case let mismatches? where mismatches.isEmpty:
            Output.line("credentials and passwords: every credential has its password")
        case let mismatches?:
            Output.line(
                "credentials and passwords: not in pairs (`keyjar credential repair` adopts the passwords, keeps the credentials):"
            )
            for mismatch in mismatches { Output.line("  \(mismatch.statusLine)") }
        }
        if let inbound = status.inbound {
            Output.line(
                "incoming requests: \(Self.mebibytes(inbound.buffered)) buffered (peak \(Self.mebibytes(inbound.peakBuffered))), "
                    + "large frames \(Self.mebibytes(inbound.reserved)) of \(Self.mebibytes(inbound.budget)) (peak \(Self.mebibytes(inbound.peakReserved))), "
                    + "\(inbound.pausedConnections) client(s) paused"
            )
        }
    }

    /// The encrypted file's lock, and until when it stays open.
    static func describe(_ lock: ServiceStatus.SecretsLock, now: Date = Date()) -> String {
        if lock.isLocked { return "locked (`keyjar unlock` opens it)" }
        guard let idle = lock.lockAfterIdle, let locksIn = lock.locksIn else {
            return "unlocked until `keyjar lock` or keyjard stops"
        }
        let until = Output.time(now.addingTimeInterval(TimeInterval(locksIn)))
        return
            "unlocked until \(until) unless a password is used (locks after \(DurationText.text(seconds: idle)) unused)"
    }

    private static func mebibytes(_ bytes: Int) -> String {
        "\(bytes / 1_048_576).\(bytes % 1_048_576 * 10 / 1_048_576) MiB"
    }
}

/// The `--json` shape of `keyjar status` when keyjard cannot be reached (exit status 3).
private struct UnreachableJSON {
    var reachable = false
    var socketPath: String
    var error: String

    var json: JSONValue {
        .object([("error", .string(error)), ("reachable", .bool(reachable)), ("socketPath", .string(socketPath))])
    }
}

/// The `--json` shape of `keyjar status`: the service's own fields, the policy named as on the
/// command line.
private struct StatusJSON {
    var reachable = true
    var version: String
    var protocolVersion: Int
    var pid: Int32
    var socketPath: String
    /// The socket this command was asked to use: another than `socketPath` when keyjard was
    /// reached through the database's pointer.
    var requestedSocketPath: String?
    var databasePath: String
    var schemaVersion: Int64
    var cookieCount: Int
    var credentialCount: Int
    var sequence: UInt64
    var secretsBackend: String
    var secretsHealthy: Bool
    var secretsDetail: String
    var acceptPolicy: String
    var connectedClients: Int
    var inbound: InboundJSON?
    var credentialMismatches: [MismatchJSON]?
    var secretsLock: ServiceStatus.SecretsLock?

    init(_ status: ServiceStatus) {
        version = status.version
        protocolVersion = status.protocolVersion
        pid = status.pid
        socketPath = status.socketPath
        databasePath = status.databasePath
        schemaVersion = status.schemaVersion
        cookieCount = status.cookieCount
        credentialCount = status.credentialCount
        sequence = status.sequence
        secretsBackend = status.secretsBackend
        secretsHealthy = status.secretsHealthy
        secretsDetail = status.secretsDetail
        acceptPolicy = AcceptPolicyArgument(status.acceptPolicy).rawValue
        connectedClients = status.connectedClients
        inbound = status.inbound.map(InboundJSON.init)
        credentialMismatches = status.credentialMismatches?.map(MismatchJSON.init)
        secretsLock = status.secretsLock
    }

    /// A member for each property, named after it; `requestedSocketPath`, `inbound` and
    /// `credentialMismatches` left out when absent.
    var json: JSONValue {
        .object(omittingAbsent: [
            "acceptPolicy": .string(acceptPolicy),
            "connectedClients": .integer(connectedClients),
            "cookieCount": .integer(cookieCount),
            "credentialCount": .integer(credentialCount),
            "credentialMismatches": credentialMismatches.map { JSONValue.array($0.map(\.json)) },
            "databasePath": .string(databasePath),
            "inbound": inbound?.json,
            "pid": .integer(pid),
            "protocolVersion": .integer(protocolVersion),
            "reachable": .bool(reachable),
            "requestedSocketPath": requestedSocketPath.map(JSONValue.string),
            "schemaVersion": .integer(schemaVersion),
            "secretsBackend": .string(secretsBackend),
            "secretsDetail": .string(secretsDetail),
            "secretsHealthy": .bool(secretsHealthy),
            "secretsLock": secretsLock.map(Self.json),
            "sequence": .integer(sequence),
            "socketPath": .string(socketPath),
            "version": .string(version),
        ])
    }

    /// The protocol's `secretsLock` object, with `locksAt` (ISO 8601) beside `locksIn`.
    static func json(_ lock: ServiceStatus.SecretsLock) -> JSONValue {
        .object(omittingAbsent: [
            "lockAfterIdle": lock.lockAfterIdle.map { JSONValue.integer($0) },
            "locked": .bool(lock.isLocked),
            "locksAt": lock.locksIn.map { JSONValue.string(Output.time(Date().addingTimeInterval(TimeInterval($0)))) },
            "locksIn": lock.locksIn.map { JSONValue.integer($0) },
        ])
    }

    /// The fields as the protocol's `inbound` object has them.
    struct InboundJSON {
        var budget: Int
        var reserved: Int
        var peakReserved: Int
        var buffered: Int
        var peakBuffered: Int
        var maximumConnections: Int
        var pausedConnections: Int

        init(_ inbound: ServiceStatus.Inbound) {
            budget = inbound.budget
            reserved = inbound.reserved
            peakReserved = inbound.peakReserved
            buffered = inbound.buffered
            peakBuffered = inbound.peakBuffered
            maximumConnections = inbound.maximumConnections
            pausedConnections = inbound.pausedConnections
        }

        var json: JSONValue {
            .object([
                ("budget", .integer(budget)), ("buffered", .integer(buffered)),
                ("maximumConnections", .integer(maximumConnections)),
                ("pausedConnections", .integer(pausedConnections)), ("peakBuffered", .integer(peakBuffered)),
                ("peakReserved", .integer(peakReserved)), ("reserved", .integer(reserved)),
            ])
        }
    }

    /// A mismatch as the protocol's `credentialMismatches` elements have it.
    struct MismatchJSON {
        var kind: String
        var space: SpaceJSON
        var user: String
        var noticed: Double?

        init(_ mismatch: CredentialMismatch) {
            kind = mismatch.kind.rawValue
            space = SpaceJSON(mismatch.space)
            user = mismatch.user
            noticed = mismatch.noticed
        }

        /// `noticed` left out when absent.
        var json: JSONValue {
            .object(omittingAbsent: [
                "kind": .string(kind), "noticed": noticed.map(JSONValue.number(of:)), "space": space.json,
                "user": .string(user),
            ])
        }
    }

    struct SpaceJSON {
        var host: String
        var port: Int
        var `protocol`: String
        var realm: String?
        var authenticationMethod: String
        var proxyType: String

        init(_ space: ProtectionSpace) {
            host = space.host
            port = space.port
            `protocol` = space.protocol
            realm = space.realm
            authenticationMethod = space.authenticationMethod.rawValue
            proxyType = space.proxyType.rawValue
        }

        /// `realm` left out when absent.
        var json: JSONValue {
            .object(omittingAbsent: [
                "authenticationMethod": .string(authenticationMethod), "host": .string(host), "port": .integer(port),
                "protocol": .string(self.protocol), "proxyType": .string(proxyType),
                "realm": realm.map(JSONValue.string),
            ])
        }
    }
}
