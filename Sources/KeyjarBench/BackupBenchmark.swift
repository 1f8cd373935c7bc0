import CoreFoundation  // struct stat's members resolve there
import Foundation
import Glibc
import Keyjar
import KeyjarCore

/// `keyjar-bench backup`: a store of 100,000 cookies on 1,000 sites, 1,000 credentials and a
/// domain rule (keyjard's file backend) is backed up by `keyjar backup`, wiped, restored by
/// `keyjar restore` into a new keyjard and compared item by item, every password included.
/// Reports each command's time beside the floor of the same run: `keyjar cookie export` of
/// the same cookies (a plain dump, nothing encrypted, no secret read). Exits 1 when anything
/// was lost or a password is in the file in clear.
func runBackupBenchmark() throws {
    let directory = NSTemporaryDirectory() + "keyjar-backup-bench-\(getpid())"
    let service = directory + "/service"
    try FileManager.default.createDirectory(atPath: service, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let keyjar = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("keyjar").path

    var daemon = try BenchDaemon(directory: service)
    let expires = Date().addingTimeInterval(86_400 * 30)
    let client = try KeyjarClient(
        configuration: .init(socketPath: daemon.socketPath, autoStart: false, keepsReplica: false)
    )
    for site in 0..<1_000 {
        try client.insertCookies(
            (0..<100).map { index in
                Cookie(
                    name: "c\(index)",
                    value: "cookie-\(site)-\(index)",
                    domain: "site\(site).example",
                    hostOnly: false,
                    path: "/",
                    expires: expires,
                    secure: true,
                    creation: Date(timeIntervalSince1970: 1_700_000_000 + Double(site * 100 + index)),
                    lastAccess: Date(timeIntervalSince1970: 1_700_000_000 + Double(site * 100 + index))
                )
            }
        )
    }
    for batch in 0..<10 {
        try client.saveCredentials(
            (0..<100).map { index in
                let number = batch * 100 + index
                return CredentialWrite(
                    space: ProtectionSpace(host: "host\(number).example", protocol: "https", realm: "r"),
                    user: "user\(number)",
                    password: "bench-secret-\(number)",
                    refreshToken: number % 10 == 0 ? "bench-refresh-\(number)" : nil,
                    tokenRefresh: number % 10 == 0 ? TokenRefresh(endpoint: "https://host\(number).example/token") : nil
                )
            }
        )
    }
    var policy = try client.policy()
    policy.domainRules["ads.example"] = .block
    try client.setPolicy(policy)
    let before = try StoreContents(client)
    client.close()

    func run(_ arguments: [String], input: String = "") throws -> UInt64 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: keyjar)
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["KEYJAR_SOCKET"] = daemon.socketPath
        environment["KEYJAR_NO_AUTOSTART"] = "1"
        environment["KEYJAR_TIMEOUT"] = "600"
        process.environment = environment
        let stdin = Pipe()
        process.standardInput = stdin
        process.standardOutput = FileHandle.nullDevice
        let started = nanoseconds()
        try process.run()
        try stdin.fileHandleForWriting.write(contentsOf: Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw BenchmarkError("keyjar \(arguments.first ?? "") failed") }
        return nanoseconds() - started
    }
    let file = directory + "/store.backup"
    let exportTime = try run(["cookie", "export", "--format", "json", "-o", directory + "/cookies.json"])
    let backupTime = try run(["backup", file, "--passphrase-stdin"], input: "bench passphrase\n")
    let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
    var inClear = 0
    for marker in ["bench-secret-", "bench-refresh-", "cookie-1-", "host1.example", "user1"]
    where bytes.range(of: Data(marker.utf8)) != nil {
        inClear += 1
    }
    var info = stat()
    let mode = stat(file, &info) == 0 ? info.st_mode & 0o777 : 0

    daemon.stop()
    for name in try FileManager.default.contentsOfDirectory(atPath: service) {
        try FileManager.default.removeItem(atPath: service + "/" + name)
    }
    daemon = try BenchDaemon(directory: service)
    defer { daemon.stop() }
    let restoreTime = try run(["restore", file, "--passphrase-stdin"], input: "bench passphrase\n")
    let checker = try KeyjarClient(
        configuration: .init(socketPath: daemon.socketPath, autoStart: false, keepsReplica: false)
    )
    let after = try StoreContents(checker)
    checker.close()
    let lost = before.differences(from: after)

    print(
        "backup_store: 100000 cookies, 1000 credentials, backup file \(bytes.count) bytes, mode \(String(mode, radix: 8))"
    )
    print("backup_ms: \(backupTime / 1_000_000) ms")
    print("restore_ms: \(restoreTime / 1_000_000) ms")
    print("cookie_export_json_ms: \(exportTime / 1_000_000) ms")
    print("backup_over_cookie_export: \(String(format: "%.2f", Double(backupTime) / Double(exportTime))) x")
    print("backup_items_lost: \(lost.count)")
    print("backup_markers_in_clear: \(inClear)")
    for line in lost.prefix(10) { print("  \(line)") }
    if !lost.isEmpty || inClear > 0 || mode != 0o600 { exit(1) }
}

/// Everything a store holds, as compared item by item.
private struct StoreContents {
    var cookies: [String: Cookie]
    var credentials: [String: String]
    var rules: [String: CookieDomainAction]

    init(_ client: KeyjarClient) throws {
        cookies = Dictionary(
            try client.cookies().map { ("\($0.name) \($0.domain) \($0.path) \($0.hostOnly)", $0) },
            uniquingKeysWith: { first, _ in first }
        )
        credentials = [:]
        for record in try client.credentialRecords() {
            let password = try client.password(user: record.user, for: record.space) ?? "(none)"
            let refresh = record.hasRefreshToken ? try client.refreshToken(user: record.user, for: record.space) : nil
            credentials["\(record.space.host) \(record.space.realm ?? "") \(record.user) \(record.isDefault)"] =
                "\(password) \(refresh ?? "-") \(record.tokenRefresh?.endpoint ?? "-")"
        }
        rules = try client.policy().domainRules
    }

    func differences(from other: StoreContents) -> [String] {
        var lost: [String] = []
        for (key, cookie) in cookies where other.cookies[key] != cookie { lost.append("cookie \(key)") }
        for (key, secrets) in credentials where other.credentials[key] != secrets { lost.append("credential \(key)") }
        if other.cookies.count != cookies.count { lost.append("\(other.cookies.count) cookies of \(cookies.count)") }
        if other.credentials.count != credentials.count {
            lost.append("\(other.credentials.count) credentials of \(credentials.count)")
        }
        if other.rules != rules { lost.append("domain rules \(other.rules) instead of \(rules)") }
        return lost
    }
}
