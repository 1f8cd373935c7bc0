import Foundation
import KeyjarTestSupport
import Testing

/// README's first command, `scripts/install`, in a throwaway home (with this build's executables,
/// `KEYJAR_INSTALL_BINARIES`, and no systemd): what a user has afterwards, an upgrade in place,
/// and an uninstall that leaves nothing it installed.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct InstallScriptTests {
    private static let script = GeneratedFilesTests.root.appendingPathComponent("scripts/install").path

    /// A home to install into, and how to run programs in it.
    private struct Home {
        var path: String
        var prefix: String { path + "/.local" }
        var environment: [String: String]

        /// Runs a program, expecting success; its standard output.
        func run(_ executable: String, _ arguments: [String], input: String? = nil) async throws -> String {
            let result = try await runCommand(executable, arguments, environment: environment, input: input)
            #expect(result.status == 0, "\(executable) \(arguments): \(result.error)")
            return result.output
        }

        func keyjar(_ arguments: String..., input: String? = nil) async throws -> String {
            try await run(prefix + "/bin/keyjar", arguments, input: input)
        }

        /// This home's environment with PATH left without the prefix's bin: only ``ProgramLayout``
        /// finds keyjard then.
        var withoutPrefixOnPath: Home {
            var home = self
            home.environment["PATH"] = "/usr/bin:/bin"
            return home
        }
    }

    @Test func installUpgradeAndUninstallInAThrowawayHome() async throws {
        let secrets = try await PrivateSecretService()
        var environment = secrets.environment
        let path = try #require(environment["HOME"])
        environment["PATH"] = path + "/.local/bin:/usr/bin:/bin"
        environment["KEYJAR_INSTALL_BINARIES"] = (DaemonProcess.binary as NSString).deletingLastPathComponent
        environment["KEYJAR_INSTALL_SYSTEMD"] = "no"
        let home = Home(path: path, environment: childEnvironment(environment))
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        do {
            try await installUpgradeAndUninstall(in: home)
        } catch {
            await Self.stopKeyjard(in: home)
            throw error
        }
        await Self.stopKeyjard(in: home)
    }

    private func installUpgradeAndUninstall(in home: Home) async throws {
        let prefix = home.prefix
        let before = try Self.files(under: home.path)
        // Run as by a user whose PATH lacks the prefix's bin until the next login: the install's
        // own `keyjar status` goes to keyjar-full in libexec/keyjar, which starts the keyjard in
        // bin (``ProgramLayout``), PATH being no help.
        let installed = try await home.withoutPrefixOnPath.run(Self.script, [])
        #expect(installed.contains("Installed Keyjar 0.1.0 into \(prefix):"), "\(installed)")
        #expect(installed.contains("keyjar status: keyjard answers."), "\(installed)")
        #expect(installed.contains("Add \(prefix)/bin to PATH"), "\(installed)")
        #expect(installed.contains("no systemd --user here"))
        #expect(installed.contains("Undo: scripts/install --uninstall"))
        let files =
            [
                "bin/keyjar", "libexec/keyjar/keyjar-full", "bin/keyjard", "share/man/man1/keyjar.1",
                "share/man/man1/keyjard.1", "share/bash-completion/completions/keyjar",
                "share/zsh/site-functions/_keyjar",
            ].map { prefix + "/" + $0 } + [home.path + "/.config/fish/completions/keyjar.fish"]
        for file in files { #expect(FileManager.default.fileExists(atPath: file), "\(file)") }
        for helper in ["git-credential-keyjar", "docker-credential-keyjar"] {
            #expect(try FileManager.default.destinationOfSymbolicLink(atPath: prefix + "/bin/\(helper)") == "keyjar")
        }
        // On PATH: `keyjar`, the names git and Docker call it by, and the service; keyjar-full
        // is keyjar's own.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: prefix + "/bin").sorted()
                == ["docker-credential-keyjar", "git-credential-keyjar", "keyjar", "keyjard"]
        )
        let unit = try String(contentsOfFile: home.path + "/.config/systemd/user/keyjard.service", encoding: .utf8)
        #expect(unit.contains("ExecStart=\(prefix)/bin/keyjard\n"))
        let syncUnit = try String(
            contentsOfFile: home.path + "/.config/systemd/user/keyjar-sync.service",
            encoding: .utf8
        )
        #expect(syncUnit.contains("ExecStart=\(prefix)/bin/keyjar sync --watch\n"))

        // keyjar answers, git asks it, man and bash find their files.
        #expect(
            try await home.keyjar("status").contains("credentials and passwords: every credential has its password")
        )
        _ = try await home.run("/usr/bin/git", ["config", "--global", "credential.helper", "keyjar"])
        _ = try await home.keyjar(
            "credential",
            "add",
            "--url",
            "https://git.example",
            "--user",
            "alice",
            "--password-stdin",
            input: "pw-alice"
        )
        let fill = try await home.run(
            "/usr/bin/git",
            ["credential", "fill"],
            input: "protocol=https\nhost=git.example\n\n"
        )
        #expect(fill.contains("username=alice\npassword=pw-alice\n"), "\(fill)")
        for page in ["keyjar", "keyjard"] {
            #expect(try await home.run("/usr/bin/man", ["-w", page]) == "\(prefix)/share/man/man1/\(page).1\n")
        }
        let completion = try await home.run(
            "/bin/bash",
            ["-c", "source \(prefix)/share/bash-completion/completions/keyjar && complete -p keyjar"]
        )
        #expect(completion.contains(" keyjar\n"), "\(completion)")

        // Run again: an upgrade in place. The keyjard serving is restarted, keeping everything,
        // session cookies included (the login session goes on). A file an older install listed
        // and this one does not (keyjar-full on PATH) is removed.
        _ = try await home.keyjar("cookie", "set", "--url", "https://site.example/", "sid=1")
        let first = try #require(try await Self.pid(home.keyjar("status", "--json")))
        let olderFile = prefix + "/bin/keyjar-full"
        try await installExecutable(copying: "/bin/true", to: olderFile)
        let manifest = prefix + "/share/keyjar/installed-files"
        let listed = try String(contentsOfFile: manifest, encoding: .utf8)
        try (listed + olderFile + "\n").write(toFile: manifest, atomically: true, encoding: .utf8)
        let upgraded = try await home.run(Self.script, [])
        #expect(upgraded.contains("removed \(olderFile) (no longer installed)"), "\(upgraded)")
        #expect(!FileManager.default.fileExists(atPath: olderFile))
        #expect(try String(contentsOfFile: manifest, encoding: .utf8) == listed)
        #expect(
            upgraded.contains("Upgraded in place; the keyjard that was serving (pid \(first)) restarted"),
            "\(upgraded)"
        )
        let second = try #require(try await Self.pid(home.keyjar("status", "--json")))
        #expect(second != first)
        #expect(try await home.keyjar("cookie", "get", "https://site.example/") == "sid=1\n")
        #expect(
            try await home.keyjar("credential", "list").contains("https://git.example:443 method default user alice")
        )

        // Uninstall: every file install put there is gone, keyjard stopped, the store kept.
        let removed = try await home.run(Self.script, ["--uninstall"])
        #expect(removed.contains("The store is kept in \(home.path)/.local/share/keyjar"))
        #expect(kill(second, 0) != 0 || Self.isZombie(second))
        let left = try Self.files(under: home.path).subtracting(before)
        let unexpected = left.filter { path in
            !path.hasPrefix(home.path + "/.local/share/keyjar/") && path != home.path + "/.gitconfig"
                && !path.hasPrefix(home.path + "/.local/share/keyrings/")
        }
        #expect(unexpected.isEmpty, "left behind: \(unexpected.sorted())")
        #expect(left.contains(home.path + "/.local/share/keyjar/store.sqlite3"))
        let again = try await runCommand(Self.script, ["--uninstall"], environment: home.environment)
        #expect(again.status == 1 && again.error.contains("nothing to uninstall"))
    }

    /// Every regular file and symbolic link under `directory`.
    private static func files(under directory: String) throws -> Set<String> {
        var found: Set<String> = []
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return found }
        while let relative = walker.nextObject() as? String {
            let path = directory + "/" + relative
            // Not followed: a link is listed as itself.
            let type = (try? FileManager.default.attributesOfItem(atPath: path))?[.type] as? FileAttributeType
            if type == .typeRegular || type == .typeSymbolicLink { found.insert(path) }
        }
        return found
    }

    private static func pid(_ statusJSON: String) throws -> Int32? {
        let object = try JSONSerialization.jsonObject(with: Data(statusJSON.utf8)) as? [String: Any]
        return (object?["pid"] as? Int).map(Int32.init)
    }

    private static func isZombie(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        return stat.split(separator: ")").last?.split(separator: " ").first == "Z"
    }

    /// A keyjard the test left serving (a failed expectation midway) is stopped with the test.
    private static func stopKeyjard(in home: Home) async {
        let keyjar = home.prefix + "/bin/keyjar"
        guard FileManager.default.fileExists(atPath: keyjar),
            let status = try? await runCommand(
                keyjar,
                ["status", "--json", "--no-start"],
                environment: home.environment
            ),
            let pid = try? pid(status.output)
        else { return }
        kill(pid, SIGTERM)
    }
}
