import Foundation
import Glibc

/// A Secret Service of a test's own that the test can take away and bring back: a private
/// D-Bus session bus (without service activation, so that nothing restarts the keyring behind
/// the test's back) and gnome-keyring-daemon on it, its login keyring unlocked with a throwaway
/// password and kept in a private HOME, so that a restarted daemon finds what it had stored.
public final class PrivateSecretService: @unchecked Sendable {
    // @unchecked: used from the owning test only.
    public let directory: TemporaryDirectory
    /// What a child needs to reach this Secret Service (and nothing of the test's own).
    public let environment: [String: String]
    private let bus = ChildProcess()
    private var keyring: ChildProcess?
    private let loginKeyring: Bool
    /// This one's place among the private Secret Services running at once.
    private let slot: ConcurrencyGate.Slot

    /// How many run at once: each bus daemon holds one of the user's inotify instances
    /// (``ConcurrencyGate``), and two cores gain nothing from more.
    private static let running = ConcurrencyGate(limit: 8)

    /// Starts the bus and the keyring; with `loginKeyring: false` the keyring has no collection
    /// at all (as a gnome-keyring-daemon started outside a desktop login), so nothing can be
    /// stored until one is created.
    public init(loginKeyring: Bool = true) async throws {
        self.loginKeyring = loginKeyring
        slot = await Self.running.enter()
        directory = try TemporaryDirectory()
        for name in ["home", "run"] {
            try FileManager.default.createDirectory(
                atPath: directory.path(name),
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        }
        let configuration = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(directory.path("run/bus"))</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
              </policy>
            </busconfig>
            """
        try configuration.write(toFile: directory.path("bus.conf"), atomically: true, encoding: .utf8)
        bus.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        bus.arguments = ["--config-file=\(directory.path("bus.conf"))", "--nofork", "--print-address=1"]
        let output = Pipe()
        bus.standardOutput = output
        bus.standardError = FileHandle.nullDevice
        try bus.run()
        guard let address = await DaemonProcess.readLine(from: output.fileHandleForReading), !address.isEmpty
        else {
            bus.terminate()
            throw TestSupportError("the private D-Bus daemon printed no address")
        }
        environment = [
            "HOME": directory.path("home"), "XDG_RUNTIME_DIR": directory.path("run"),
            "XDG_DATA_HOME": directory.path("home/.local/share"), "DBUS_SESSION_BUS_ADDRESS": address,
            "PATH": "/usr/bin:/bin",
        ]
        try await startKeyring()
    }

    /// Starts gnome-keyring-daemon and waits until it owns `org.freedesktop.secrets`.
    public func startKeyring() async throws {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gnome-keyring-daemon")
        // --unlock with a password on standard input creates (or opens) the login keyring.
        process.arguments = (loginKeyring ? ["--unlock"] : []) + ["--foreground", "--components=secrets"]
        process.environment = environment
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        if loginKeyring { DescriptorIO.write("throwaway", to: input.fileHandleForWriting) }
        try input.fileHandleForWriting.close()
        keyring = process
        try await waitForOwner(present: true)
    }

    /// SIGKILLs gnome-keyring-daemon, as a crash would, and waits until the bus has noticed.
    public func killKeyring() async throws {
        guard let keyring else { return }
        kill(keyring.processIdentifier, SIGKILL)
        try await waitUntil("gnome-keyring-daemon ending") { !keyring.isRunning }
        self.keyring = nil
        try await waitForOwner(present: false)
    }

    /// Locks the login collection, as a screen lock or a timeout of the desktop does.
    public func lockLoginCollection() async throws {
        let result = try await runCommand(
            "/usr/bin/gdbus",
            [
                "call", "--session", "--dest", "org.freedesktop.secrets", "--object-path", "/org/freedesktop/secrets",
                "--method", "org.freedesktop.Secret.Service.Lock", "['/org/freedesktop/secrets/collection/login']",
            ],
            environment: environment
        )
        guard result.status == 0 else { throw TestSupportError("gdbus could not lock the collection: \(result.error)") }
    }

    /// Runs `secret-tool` against this Secret Service.
    public func secretTool(
        _ arguments: [String],
        input: String? = nil
    ) async throws -> (status: Int32, output: String, error: String) {
        try await runCommand("/usr/bin/secret-tool", arguments, environment: environment, input: input)
    }

    /// `secret-tool` attributes of a password Keyjar stores (see `Schemas/secret-schema.md`);
    /// with `sharedNames`, as an older Keyjar stored it, under the common attribute names.
    public static func keyjarAttributes(
        host: String,
        port: Int,
        protocol: String,
        realm: String = "",
        method: String = "default",
        user: String,
        sharedNames: Bool = false
    ) -> [String] {
        let prefix = sharedNames ? "" : "keyjar-"
        return ["xdg:schema", "org.keyjar.Credential"]
            + [
                ("server", host), ("port", String(port)), ("protocol", `protocol`), ("realm", realm),
                ("authtype", method), ("proxytype", "none"), ("user", user),
            ].flatMap { [prefix + $0.0, $0.1] }
    }

    private func waitForOwner(present: Bool) async throws {
        try await waitUntil(
            "org.freedesktop.secrets \(present ? "appearing" : "going away") on the private bus",
            every: .milliseconds(20)
        ) {
            let reply = try await runCommand(
                "/usr/bin/dbus-send",
                [
                    "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets",
                ],
                environment: environment
            )
            return reply.status == 0 && reply.output.contains("boolean \(present)")
        }
    }

    deinit {
        // Foundation reaps them; nothing waits here, on whichever thread releases this.
        if let keyring, keyring.isRunning { kill(keyring.processIdentifier, SIGKILL) }
        if bus.isRunning { kill(bus.processIdentifier, SIGKILL) }
    }
}
