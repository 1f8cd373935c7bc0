import Foundation
import Glibc
import Keyjar
import KeyjarCodec
import KeyjarCore
import KeyjarProtocol
import KeyjarStore

/// `keyjar-bench stress`: client processes (`KEYJAR_STRESS_CLIENTS`, 8) doing a random mix of
/// cookie sets and deletes, imports, policy changes, credential adds and removes and replica
/// lookups for `KEYJAR_STRESS_SECONDS` (30), while keyjard is SIGKILLed at random moments and
/// started again (`KEYJAR_STRESS_KILLS`, 60; 0 for none). Then: every acknowledged write is
/// there (or a later one of the same client replaced it), every client's replica equals
/// keyjard's snapshot, no client hung or died, and the database passes `PRAGMA
/// integrity_check`. One summary line; exit status 1 when anything was lost or wrong.
///
/// With `KEYJAR_STRESS_SECRETS=service` passwords go to a real gnome-keyring-daemon on a
/// private bus, which is SIGKILLed `KEYJAR_STRESS_KEYRING_KILLS` (10) times and started again
/// after a random outage; otherwise to keyjard's file backend. Either way keyjard's repair
/// runs at the end (its findings are the half credentials keyjard's kills left), and every
/// credential's password must be its last acknowledged one or a later attempt.
///
/// With `KEYJAR_STRESS_SOCKETS=2` keyjard listens on one of two sockets, the other after each
/// kill, and half the clients are configured with each: as a shell without `XDG_RUNTIME_DIR`
/// beside a desktop session's, a client whose socket has nobody reaches the keyjard that serves
/// the database through its pointer (`DATABASE.keyjard`), and no second keyjard serves it.
///
/// With `KEYJAR_STRESS_DISK_FULL=N` (root only) keyjard's directory is a 256 MiB tmpfs that a
/// ballast file fills N times, for 0.2–1 s each: writes are refused meanwhile (`refused-20`,
/// storageFailure), and nothing acknowledged may be lost.
func runStressBenchmark() throws {
    let environment = ProcessInfo.processInfo.environment
    let clientCount = Int(environment["KEYJAR_STRESS_CLIENTS"] ?? "") ?? 8
    let seconds = Double(environment["KEYJAR_STRESS_SECONDS"] ?? "") ?? 30
    let killTarget = Int(environment["KEYJAR_STRESS_KILLS"] ?? "") ?? 60
    let useSecretService = environment["KEYJAR_STRESS_SECRETS"] == "service"
    let keyringKillTarget = useSecretService ? Int(environment["KEYJAR_STRESS_KEYRING_KILLS"] ?? "") ?? 10 : 0
    let diskEpisodeTarget = Int(environment["KEYJAR_STRESS_DISK_FULL"] ?? "") ?? 0
    let socketCount = environment["KEYJAR_STRESS_SOCKETS"] == "2" ? 2 : 1
    try StressDisk.enterPrivateMountNamespaceIfNeeded(episodes: diskEpisodeTarget)
    let directory = NSTemporaryDirectory() + "keyjar-stress-\(getpid())"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let secretService = useSecretService ? try BenchSecretService(directory: directory + "/secrets") : nil
    // keyjard's own directory: the socket, the database and (file backend) the secrets.
    let serviceDirectory = directory + "/service"
    try FileManager.default.createDirectory(atPath: serviceDirectory, withIntermediateDirectories: true)
    // Well above what keyjard itself keeps there under a burst of writes (the WAL stays about
    // 64 MiB, CheckpointPolicy, beside the database): at 64 MiB the WAL alone filled it, and a
    // keyjard killed then could not start again (no room for the WAL index), so only the
    // ballast may fill it.
    let disk = diskEpisodeTarget > 0 ? try StressDisk(directory: serviceDirectory, size: "256m") : nil
    defer { if disk != nil { umount2(serviceDirectory, Int32(MNT_DETACH)) } }
    // The sockets keyjard listens on in turn: beside the database, and in a directory of its
    // own (as $XDG_RUNTIME_DIR/keyjar and the fallback are).
    var sockets = [serviceDirectory + "/keyjar.sock"]
    if socketCount == 2 {
        let other = directory + "/other-runtime/keyjar"
        try FileManager.default.createDirectory(
            atPath: other,
            withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700]
        )
        sockets.append(other + "/keyjar.sock")
    }
    var starts = 0
    // A keyjard started while the disk is full may not open its database: it is tried again
    // until the episode ends.
    func startDaemon() throws -> BenchDaemon {
        let deadline = Date().addingTimeInterval(30)
        defer { starts += 1 }
        while true {
            do {
                return try BenchDaemon(
                    directory: serviceDirectory,
                    socketPath: sockets[starts % sockets.count],
                    secretService: secretService?.environment
                )
            } catch  where Date() < deadline {
                usleep(50_000)
            }
        }
    }
    var daemon = try startDaemon()

    // The clients: this binary again.
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).path
    var clients: [(process: Process, output: Pipe)] = []
    for id in 0..<clientCount {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = [
            "stress-client", sockets[id % sockets.count], String(id), String(seconds), String(UInt64(id) &* 7919 &+ 17),
        ]
        // The database a client whose socket has nobody looks for the serving keyjard by.
        var clientEnvironment = ProcessInfo.processInfo.environment
        clientEnvironment["KEYJAR_DATABASE"] = serviceDirectory + "/store.sqlite3"
        process.environment = clientEnvironment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        clients.append((process, output))
    }
    // Each report is read as the client writes it, so no pipe ever fills.
    let collected = DispatchGroup()
    let received = StressReports(count: clientCount)
    for (index, client) in clients.enumerated() {
        collected.enter()
        let handle = client.output.fileHandleForReading
        Thread.detachNewThread {
            received.set(index, ((try? handle.readToEnd()) ?? Data()))
            collected.leave()
        }
    }

    // Kills at random moments over the first 90% of the run: the wait before each is random
    // around what is left of that time for each kill still to come.
    // The Secret Service's outages on a thread of their own: each kill at a random moment,
    // back after a random 50–500 ms.
    let start = Date()
    let end = start.addingTimeInterval(seconds * 0.9)
    let keyringKills = LockedCounter()
    let outagesDone = DispatchSemaphore(value: 0)
    if let secretService, keyringKillTarget > 0 {
        let service = UncheckedBox(secretService)
        Thread.detachNewThread {
            var random = StressRandom(state: 4242)
            while Date() < end, keyringKills.value < keyringKillTarget {
                let spacing = end.timeIntervalSinceNow / Double(keyringKillTarget - keyringKills.value)
                usleep(useconds_t(max(0, Double.random(in: 0.1...1.0, using: &random) * spacing) * 1_000_000))
                guard (try? service.value.kill()) != nil else { break }
                keyringKills.increment()
                usleep(useconds_t(Double.random(in: 0.05...0.5, using: &random) * 1_000_000))
                guard (try? service.value.start()) != nil else { break }
            }
            outagesDone.signal()
        }
    } else {
        outagesDone.signal()
    }
    let diskEpisodes = LockedCounter()
    let episodesDone = DispatchSemaphore(value: 0)
    if let disk {
        let disk = UncheckedBox(disk)
        Thread.detachNewThread {
            var random = StressRandom(state: 4343)
            while Date() < end, diskEpisodes.value < diskEpisodeTarget {
                let spacing = end.timeIntervalSinceNow / Double(diskEpisodeTarget - diskEpisodes.value)
                usleep(useconds_t(max(0, Double.random(in: 0.1...1.0, using: &random) * spacing) * 1_000_000))
                guard (try? disk.value.fill()) != nil else { break }
                diskEpisodes.increment()
                usleep(useconds_t(Double.random(in: 0.2...1.0, using: &random) * 1_000_000))
                disk.value.free()
            }
            disk.value.free()
            episodesDone.signal()
        }
    } else {
        episodesDone.signal()
    }

    var kills = 0
    var random = StressRandom(state: 42)
    if killTarget > 0 {
        while Date() < end, kills < killTarget {
            let spacing = end.timeIntervalSinceNow / Double(killTarget - kills)
            usleep(useconds_t(max(0, Double.random(in: 0.1...1.0, using: &random) * spacing) * 1_000_000))
            kill(daemon.process.processIdentifier, SIGKILL)
            daemon.process.waitUntilExit()
            kills += 1
            daemon = try startDaemon()
        }
    }
    outagesDone.wait()
    episodesDone.wait()
    if let secretService, !secretService.isRunning { try secretService.start() }

    // Every client ends on its own within its time and a minute for its last checks.
    var hung = 0
    if collected.wait(timeout: .now() + seconds + 60) == .timedOut {
        for client in clients where client.process.isRunning {
            hung += 1
            kill(client.process.processIdentifier, SIGKILL)
        }
        _ = collected.wait(timeout: .now() + 10)
    }
    var failedClients = 0
    for client in clients {
        client.process.waitUntilExit()
        if client.process.terminationStatus != 0 { failedClients += 1 }
    }

    // keyjard's final state, as a fresh client sees it, once the halves of credential writes
    // that keyjard's kills cut short are repaired.
    let checker = try KeyjarClient(configuration: .init(socketPath: daemon.socketPath, autoStart: false))
    // Once the disk has room again, keyjard must take writes again: when it does not, what
    // fills its directory says why.
    let repaired: Response
    do {
        // Every half removed or adopted, so that the check below sees pairs or nothing.
        repaired = try checker.call(.repairCredentials(removeUnpaired: true))
    } catch {
        var listing = ""
        for name in (try? FileManager.default.contentsOfDirectory(atPath: serviceDirectory)) ?? [] {
            let size = (try? FileManager.default.attributesOfItem(atPath: serviceDirectory + "/" + name)[.size]) ?? "?"
            listing += " \(name)=\(size)"
        }
        var space = statvfs()
        if statvfs(serviceDirectory, &space) == 0 {
            listing += "; free \(UInt64(space.f_bavail) * UInt64(space.f_frsize)) bytes"
        }
        throw BenchmarkError("keyjard refused the final repair (\(error)); its directory:\(listing)")
    }
    guard case .credentialsRepaired(let halves, _) = repaired,
        case .snapshot(let snapshot) = try checker.call(.snapshot),
        case .credentials(let credentials) = try checker.call(.allCredentials)
    else { throw BenchmarkError("keyjard did not answer the final snapshot") }
    var passwords: [String: String?] = [:]
    for record in credentials {
        guard case .password(let password) = try checker.call(.password(space: record.space, user: record.user)) else {
            throw BenchmarkError("keyjard did not return a password")
        }
        passwords["\(record.space.host) \(record.user)"] = password
    }
    guard case .status(let finalStatus) = try checker.call(.status) else {
        throw BenchmarkError("keyjard gave no status")
    }
    checker.close()
    daemon.stop()

    var operations = 0
    var acknowledged = 0
    var lost: [String] = []
    var replicaMismatches: [String] = []
    var errors: [String: Int] = [:]
    var acknowledgedPolicies: [(UInt64, String)] = []
    var unacknowledgedPolicies = Set<String>()
    for (id, data) in received.all.enumerated() {
        guard let json = JSONReader.parse(Array(data)), let report = try? StressReport(json: json) else {
            lost.append("client \(id) sent no report")
            continue
        }
        operations += report.operations
        for (kind, count) in report.errors { errors[kind, default: 0] += count }
        if !report.replicaMatches { replicaMismatches.append("client \(id): \(report.replicaDifference)") }
        let site = "www.c\(id).stress.example"
        let stored = Dictionary(
            snapshot.cookies.filter { $0.domain == site }.map { ($0.name, stressValue($0.value, $0.partitionKey)) },
            uniquingKeysWith: { first, _ in first }
        )
        for (name, attempts) in report.cookies {
            acknowledged += attempts.filter(\.acknowledged).count
            if !isAllowed(stored[name], after: attempts) {
                lost.append(
                    "\(site) \(name): \(stored[name] ?? "absent") after \(attempts.suffix(3).map { "\($0.value ?? "deleted")\($0.acknowledged ? "" : "?")" })"
                )
            }
        }
        let host = "c\(id).stress.example"
        for (user, attempts) in report.credentials {
            acknowledged += attempts.filter(\.acknowledged).count
            // The record and its password: both there with the password of an allowed attempt,
            // or neither.
            let password = passwords["\(host) \(user)"].map { $0 ?? "the record without its password" }
            if !isAllowed(password, after: attempts) {
                lost.append(
                    "credential \(host) \(user): \(password ?? "absent") after \(attempts.suffix(3).map { "\($0.value ?? "removed")\($0.acknowledged ? "" : "?")" })"
                )
            }
        }
        for attempt in report.policies {
            if let sequence = attempt.sequence {
                acknowledged += 1
                acknowledgedPolicies.append((sequence, attempt.policy))
            } else {
                unacknowledgedPolicies.insert(attempt.policy)
            }
        }
    }
    // The policy is shared: the last acknowledged one, or one whose fate nobody learned.
    if let last = acknowledgedPolicies.max(by: { $0.0 < $1.0 }), last.0 > 0 {
        let final = snapshot.policy.acceptPolicy.rawValue
        if final != last.1 && !unacknowledgedPolicies.contains(final) {
            lost.append("policy \(final), last acknowledged \(last.1)")
        }
    }
    let integrity = try StoreDatabase(path: serviceDirectory + "/store.sqlite3").integrityCheck()

    let errorSummary = errors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
    print(
        "stress: clients \(clientCount), sockets \(socketCount), \(Int(seconds)) s, operations \(operations), kills \(kills), "
            + "acknowledged writes \(acknowledged), writes lost \(lost.count), replica mismatches \(replicaMismatches.count), "
            + "hung \(hung), failed clients \(failedClients), integrity \(integrity), "
            + "secrets \(useSecretService ? "service, keyring kills \(keyringKills.value)" : "file"), "
            + "disk-full episodes \(diskEpisodes.value), "
            + "half credentials repaired \(halves.count), left after repair \(finalStatus.credentialMismatches?.count ?? -1), "
            + "errors: \(errorSummary.isEmpty ? "none" : errorSummary)"
    )
    for line in (lost + replicaMismatches).prefix(20) { print("  \(line)") }
    if !lost.isEmpty || !replicaMismatches.isEmpty || hung > 0 || failedClients > 0 || integrity != "ok"
        || finalStatus.credentialMismatches != []
    {
        exit(1)
    }
}

/// Whether `final` can be what a client's attempts left: its last acknowledged value, or any
/// value it tried after that without learning the outcome (none acknowledged: also absent).
private func isAllowed(_ final: String?, after attempts: [StressReport.Attempt]) -> Bool {
    guard let last = attempts.lastIndex(where: \.acknowledged) else {
        return final == nil || attempts.contains { $0.value == final }
    }
    return attempts[last...].contains { $0.value == final }
}

/// The clients' reports, filled by one reader thread each.
private final class StressReports: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var reports: [Data]

    init(count: Int) { reports = Array(repeating: Data(), count: count) }

    func set(_ index: Int, _ data: Data) { lock.withLock { reports[index] = data } }
    var all: [Data] { lock.withLock { reports } }
}

/// A count shared with the outage thread.
private final class LockedCounter: @unchecked Sendable {
    // @unchecked: every access goes through `lock`.
    private let lock = NSLock()
    private var count = 0

    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// Hands the Secret Service to the outage thread, its only user until that thread ends.
private final class UncheckedBox<Value>: @unchecked Sendable {
    // @unchecked: the coordinator does not touch `value` until the outage thread has signalled.
    let value: Value
    init(_ value: Value) { self.value = value }
}
