import Foundation
import Glibc

/// A real Secret Service for `keyjar-bench stress` that it can take away and bring back: a
/// private D-Bus session bus without service activation (so nothing restarts the keyring on
/// its own) and gnome-keyring-daemon on it, unlocked with a throwaway password, its keyring in
/// a private HOME so that a restarted daemon finds what it had stored.
final class BenchSecretService {
    let environment: [String: String]
    private let bus = Process()
    private var keyring: Process?

    init(directory: String) throws {
        for name in ["home", "run"] {
            try FileManager.default.createDirectory(
                atPath: "\(directory)/\(name)",
                withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700]
            )
        }
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(directory)/run/bus</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
        </busconfig>
        """.write(toFile: "\(directory)/bus.conf", atomically: true, encoding: .utf8)
        bus.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        bus.arguments = ["--config-file=\(directory)/bus.conf", "--nofork", "--print-address=1"]
        let output = Pipe()
        bus.standardOutput = output
        bus.standardError = FileHandle.nullDevice
        try bus.run()
        var address: [UInt8] = []
        while let byte = ((try? output.fileHandleForReading.read(upToCount: 1)) ?? Data()).first,
            byte != UInt8(ascii: "\n")
        {
            address.append(byte)
        }
        guard !address.isEmpty else { throw BenchmarkError("the private D-Bus daemon printed no address") }
        environment = [
            "HOME": "\(directory)/home", "XDG_RUNTIME_DIR": "\(directory)/run",
            "DBUS_SESSION_BUS_ADDRESS": String(decoding: address, as: UTF8.self), "PATH": "/usr/bin:/bin",
        ]
        try start()
    }

    var isRunning: Bool { keyring?.isRunning ?? false }

    /// Starts gnome-keyring-daemon and waits until it owns `org.freedesktop.secrets`.
    func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/gnome-keyring-daemon")
        process.arguments = ["--unlock", "--foreground", "--components=secrets"]
        process.environment = environment
        let input = Pipe()
        process.standardInput = input
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        try? input.fileHandleForWriting.write(contentsOf: Data("throwaway".utf8))
        try input.fileHandleForWriting.close()
        keyring = process
        try waitForOwner(present: true)
    }

    /// SIGKILLs gnome-keyring-daemon, as a crash would.
    func kill() throws {
        guard let keyring else { return }
        Glibc.kill(keyring.processIdentifier, SIGKILL)
        keyring.waitUntilExit()
        self.keyring = nil
        try waitForOwner(present: false)
    }

    private func waitForOwner(present: Bool) throws {
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            let probe = Process()
            probe.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-send")
            probe.arguments = [
                "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.NameHasOwner", "string:org.freedesktop.secrets",
            ]
            probe.environment = environment
            let output = Pipe()
            probe.standardOutput = output
            probe.standardError = FileHandle.nullDevice
            try probe.run()
            let reply = String(decoding: ((try? output.fileHandleForReading.readToEnd()) ?? Data()), as: UTF8.self)
            probe.waitUntilExit()
            if reply.contains("boolean \(present)") { return }
            usleep(20_000)
        }
        throw BenchmarkError("org.freedesktop.secrets did not \(present ? "appear" : "go away") on the private bus")
    }

    deinit {
        for process in [keyring, bus].compactMap({ $0 }) where process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}
