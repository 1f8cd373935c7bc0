import Foundation
import Glibc
import KeyjarBrowserCookies
import KeyjarBrowserFixtures

/// A Chromium `Cookies` database of 10,000 cookies (meta.version 24, every value v11-encrypted
/// under a Safe Storage password kept in a private Secret Service, 10 cookies on each of 1,000
/// sites) read and decrypted in this process (cookies/s), then imported end to end by the
/// release `keyjar cookie import --from-browser chromium` into a keyjard with room for them all
/// (cookies/s, the snapshot, the Secret Service lookup, decryption and the import).
func runBrowserImportBenchmark() throws {
    let directory = NSTemporaryDirectory() + "keyjar-bench-browser-\(getpid())"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let keyjar = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("keyjar").path
    guard FileManager.default.isExecutableFile(atPath: keyjar) else {
        throw BenchmarkError("no keyjar beside keyjar-bench: run `swift build -c release` first")
    }
    let secrets = try BenchSecretService(directory: directory + "/secrets")
    let password = "bench-safe-storage-password"
    // Stored as Chromium stores it, by the application attribute, through secret-tool.
    try run(
        "/usr/bin/secret-tool",
        ["store", "--label=Chromium Safe Storage", "application", "chromium"],
        environment: secrets.environment,
        input: password
    )

    let home = directory + "/home"
    let profile = home + "/.config/chromium/Default"
    try FileManager.default.createDirectory(atPath: profile + "/Network", withIntermediateDirectories: true)
    let count = 10_000
    var sql = BrowserDatabaseFixtures.chromiumSchema(version: 24) + "BEGIN;\n"
    for index in 0..<count {
        var cookie = BrowserDatabaseFixtures.ChromiumCookie(
            hostKey: ".site\(index / 10).example",
            name: "cookie\(index % 10)",
            value: "value-\(index)-" + String(repeating: "x", count: 32)
        )
        cookie.expires = Date().addingTimeInterval(86_400)
        cookie.encryption = .v11(password: password)
        sql += try BrowserDatabaseFixtures.chromiumInsert(cookie, version: 24)
    }
    try BrowserDatabaseFixtures.run(sql + "COMMIT;\n", at: profile + "/Network/Cookies")

    let reader = ChromiumCookieReader(profile: BrowserProfile(browser: .chromium, name: "Default", directory: profile))
    let readStart = nanoseconds()
    let found = try reader.read(now: Date(), passwords: ["", password])
    let readElapsed = nanoseconds() - readStart
    guard found.cookies.count == count else {
        throw BenchmarkError("read \(found.cookies.count) of \(count) cookies")
    }
    print(
        "browser_chromium_v11_\(count)_read_decrypt_per_second: \(UInt64(count) * 1_000_000_000 / max(readElapsed, 1)) cookies/s"
    )

    let store = directory + "/store"
    try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
    let daemon = try BenchDaemon(directory: store)
    defer { daemon.stop() }
    var environment = secrets.environment
    environment["HOME"] = home
    environment["XDG_CONFIG_HOME"] = home + "/.config"
    let start = nanoseconds()
    let output = try run(
        keyjar,
        ["cookie", "import", "--from-browser", "chromium", "--no-start", "--socket", daemon.socketPath],
        environment: environment
    )
    let elapsed = nanoseconds() - start
    guard output.hasPrefix("imported \(count),") else { throw BenchmarkError("keyjar said: \(output)") }
    print(
        "browser_chromium_v11_\(count)_import_per_second: \(UInt64(count) * 1_000_000_000 / max(elapsed, 1)) cookies/s"
    )
}

/// Runs a program to its end and returns its standard output; a failure is an error.
@discardableResult
private func run(
    _ executable: String,
    _ arguments: [String],
    environment: [String: String],
    input: String = ""
)
    throws -> String
{
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.environment = environment
    let output = Pipe()
    let standardInput = Pipe()
    process.standardOutput = output
    process.standardInput = standardInput
    try process.run()
    try? standardInput.fileHandleForWriting.write(contentsOf: Data(input.utf8))
    try standardInput.fileHandleForWriting.close()
    let text = String(decoding: ((try? output.fileHandleForReading.readToEnd()) ?? Data()), as: UTF8.self)
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchmarkError("\(executable) \(arguments.first ?? "") exited with \(process.terminationStatus)")
    }
    return text
}
