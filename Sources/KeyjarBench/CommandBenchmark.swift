import Foundation
import Glibc
import KeyjarPlatform
import NIOCore
import NIOHTTP1
import NIOPosix

/// `keyjar-bench cli`: one call of the `keyjar` command as users make it, a whole process from
/// spawn to exit (wall time), beside the program they would run for the same job, alternated
/// call by call in one run:
/// - `keyjar fetch -s URL` and `curl -s URL`, a 2-byte response from a loopback server;
/// - `keyjar git-credential get` and `git credential-store get` (a file) and `secret-tool lookup`
///   (the same Secret Service keyjard keeps its passwords in);
/// - `keyjar cookie get URL`, and `keyjar --version` (no work: what start-up alone costs).
/// Targets (docs/performance.md): fetch ≤ 1× curl, cookie get and git-credential get ≤ 5 ms.
/// git-credential get is also shown over its floor: cookie get plus one Secret Service lookup
/// (`scripts/secret-lookup-floor.c`, run in the same Secret Service).
/// `keyjar` is the front: fetch is handed to keyjar-full (beside it in a build tree; both
/// processes are timed).
/// Several builds of keyjar can be measured in the same rounds (`KEYJAR_BENCH_CLI_BINARIES`).
func runCommandBenchmark() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
        "keyjar-bench-cli-\(getpid())"
    ).path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let secrets = try BenchSecretService(directory: directory + "/secrets")
    // Kept (and its keyring running) until the end; its deinit stops it.
    defer { withExtendedLifetime(secrets) {} }
    let daemon = try BenchDaemon(directory: directory, secretService: secrets.environment)
    defer { daemon.stop() }
    let server = try BenchOKServer()
    defer { server.stop() }

    // The keyjar binaries to measure, alternated: `KEYJAR_BENCH_CLI_BINARIES=label=path,…` (e.g.
    // a dynamic and a static build, or the previous release), else the one beside keyjar-bench.
    let beside = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("keyjar").path
    let binaries: [(label: String, path: String)] =
        ProcessInfo.processInfo.environment["KEYJAR_BENCH_CLI_BINARIES"].map { list in
            list.split(separator: ",").map { entry in
                let parts = entry.split(separator: "=", maxSplits: 1)
                return (String(parts[0]), String(parts.count == 2 ? parts[1] : parts[0]))
            }
        } ?? [("keyjar", beside)]
    for binary in binaries where !FileManager.default.isExecutableFile(atPath: binary.path) {
        throw BenchmarkError("no keyjar at \(binary.path): run `swift build -c release` first")
    }
    let keyjar = binaries[0].path
    var environment = secrets.environment
    environment["KEYJAR_SOCKET"] = daemon.socketPath
    environment["KEYJAR_NO_AUTOSTART"] = "1"
    let url = "http://127.0.0.1:\(server.port)/ok"
    let host = "127.0.0.1:\(server.port)"

    // What each command finds: a cookie, and alice's password in all three stores.
    func setUp(_ arguments: [String], input: String = "") throws {
        let status = try CommandRun(arguments, environment: environment, input: input, directory: directory).status
        guard status == 0 else { throw BenchmarkError("\(arguments.joined(separator: " ")) failed (\(status))") }
    }
    try setUp([keyjar, "cookie", "set", "--url", url, "session=0123456789abcdef; Path=/"])
    try setUp(
        [keyjar, "credential", "add", "--url", "http://\(host)", "--user", "alice", "--password-stdin"],
        input: "wonderland\n"
    )
    // Not `server 127.0.0.1 user alice`: storing an item replaces every item whose attributes
    // include the new one's, keyjard's own among them (gnome-keyring's replace).
    try setUp(
        ["/usr/bin/secret-tool", "store", "--label=bench", "service", "keyjar-bench", "account", "alice"],
        input: "wonderland"
    )
    let gitStore = directory + "/git-credentials"
    try "http://alice:wonderland@\(host)\n".write(toFile: gitStore, atomically: true, encoding: .utf8)
    let gitQuery = "protocol=http\nhost=\(host)\n\n"

    // Each with a piece of the output that shows it did the job (checked once, before timing).
    var commands: [(name: String, arguments: [String], input: String, shows: String)] = []
    for binary in binaries {
        let name = binary.label.replacingOccurrences(of: "-", with: "_")
        commands += [
            ("\(name)_fetch", [binary.path, "fetch", "-s", url], "", "ok"),
            ("\(name)_git_credential_get", [binary.path, "git-credential", "get"], gitQuery, "password=wonderland"),
            ("\(name)_cookie_get", [binary.path, "cookie", "get", url], "", "session=0123456789abcdef"),
            ("\(name)_version", [binary.path, "--version"], "", "keyjar "),
        ]
    }
    commands += [
        ("curl_fetch", ["/usr/bin/curl", "-s", url], "", "ok"),
        (
            "git_credential_store_get", ["/usr/bin/git", "credential-store", "--file", gitStore, "get"], gitQuery,
            "password=wonderland"
        ),
        (
            "secret_tool_lookup", ["/usr/bin/secret-tool", "lookup", "service", "keyjar-bench", "account", "alice"], "",
            "wonderland"
        ),
    ]
    // Each command once before measuring (page cache, keyjard's first lookups), its output kept.
    let outputPath = directory + "/output"
    for command in commands {
        let run = try CommandRun(
            command.arguments,
            environment: environment,
            input: command.input,
            directory: directory,
            outputPath: outputPath
        )
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        guard run.status == 0, output.contains(command.shows) else {
            throw BenchmarkError(
                "\(command.name) failed (status \(run.status), output without \"\(command.shows)\": \(output))"
            )
        }
    }
    let rounds = Int(ProcessInfo.processInfo.environment["KEYJAR_BENCH_CLI_ROUNDS"] ?? "") ?? 200
    var wall: [String: [UInt64]] = [:]
    for _ in 0..<rounds {
        for command in commands {
            let run = try CommandRun(
                command.arguments,
                environment: environment,
                input: command.input,
                directory: directory
            )
            guard run.status == 0 else { throw BenchmarkError("\(command.name) failed (\(run.status))") }
            wall[command.name, default: []].append(run.wall)
        }
    }
    // What no build of the front can beat for git-credential get: its cookie get (start-up, a
    // connection, one request) plus keyjard's Secret Service lookup, measured by a C program
    // already connected to the same Secret Service (scripts/secret-lookup-floor.c).
    let lookupFloor = try ScriptProgram(
        "secret-lookup-floor.c",
        linking: "$(pkg-config --cflags --libs libsecret-1)",
        needs: "libsecret-1-dev"
    )
    let lookupText = try lookupFloor.run(environment: environment)
    guard let lookupMicroseconds = ScriptProgram.number(after: "median ", in: lookupText) else {
        throw BenchmarkError("unexpected output from the Secret Service floor: \(lookupText)")
    }
    let lookupNanoseconds = UInt64(lookupMicroseconds * 1_000)
    print("cli_secret_service_lookup_connected_median: \(lookupNanoseconds) ns")
    var medians: [String: UInt64] = [:]
    for command in commands {
        let samples = wall[command.name] ?? []
        report("cli_\(command.name)_wall", samples: samples)
        medians[command.name] = percentile(samples.sorted(), 0.5)
    }
    func ratio(_ name: String, _ peer: String) {
        guard let mine = medians[name], let theirs = medians[peer], theirs > 0 else { return }
        print("cli_\(name)_over_\(peer): \(String(format: "%.2f", Double(mine) / Double(theirs)))")
    }
    // The 5 ms target of a lookup, as a ratio like the others (≤ 1 meets it).
    func overTarget(_ name: String) {
        guard let mine = medians[name] else { return }
        print("cli_\(name)_over_5ms: \(String(format: "%.2f", Double(mine) / 5_000_000))")
    }
    for binary in binaries {
        let name = binary.label.replacingOccurrences(of: "-", with: "_")
        ratio("\(name)_fetch", "curl_fetch")
        ratio("\(name)_git_credential_get", "git_credential_store_get")
        ratio("\(name)_git_credential_get", "secret_tool_lookup")
        overTarget("\(name)_cookie_get")
        overTarget("\(name)_git_credential_get")
        if let cookieGet = medians["\(name)_cookie_get"], let gitGet = medians["\(name)_git_credential_get"] {
            let floor = cookieGet + lookupNanoseconds
            print("cli_\(name)_git_credential_get_floor: \(floor) ns (cookie get + one Secret Service lookup)")
            print(
                "cli_\(name)_git_credential_get_over_floor: \(String(format: "%.2f", Double(gitGet) / Double(floor)))"
            )
        }
    }
}

/// One command run to its end: posix_spawn, standard input from a file, output to /dev/null.
/// Wall time from just before the spawn to the reaping. (Not its peak memory: a child spawned
/// from this process inherits this process's high-water mark in `ru_maxrss` at exec.)
private struct CommandRun {
    var status: Int32
    var wall: UInt64

    /// - Parameter outputPath: a file for its standard output and error (/dev/null when nil).
    init(
        _ arguments: [String],
        environment: [String: String],
        input: String,
        directory: String,
        outputPath: String? = nil
    ) throws {
        let inputPath = directory + "/input"
        try input.write(toFile: inputPath, atomically: false, encoding: .utf8)
        let output: ProcessSpawn.Stream = outputPath.map { .file($0, flags: O_WRONLY | O_CREAT | O_TRUNC) } ?? .null
        let options = ProcessSpawn.Options(
            standardInput: .file(inputPath, flags: O_RDONLY),
            standardOutput: output,
            // Errors beside the output, written through the same open file.
            standardError: outputPath == nil ? .null : .descriptor(1),
            environment: environment
        )
        let started = nanoseconds()
        let pid = try ProcessSpawn.start(arguments, options)
        status = ProcessSpawn.wait(pid).status
        wall = nanoseconds() - started
    }
}

/// A loopback HTTP/1.1 server that answers every request with 200 "ok".
final class BenchOKServer {
    let port: Int
    private let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let channel: any Channel

    init() throws {
        channel = try ServerBootstrap(group: group)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(OKHandler())
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        guard let port = channel.localAddress?.port else { throw BenchmarkError("the benchmark server did not bind") }
        self.port = port
    }

    func stop() {
        try? channel.close().wait()
        try? group.syncShutdownGracefully()
    }
}

private final class OKHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .end = unwrapInboundIn(data) else { return }
        let headers = HTTPHeaders([("Content-Length", "2"), ("Content-Type", "text/plain")])
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
            promise: nil
        )
        context.write(wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(string: "ok")))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
