import Foundation
import Glibc
import KeyjarCodec
import KeyjarCommands
import KeyjarPlatform

/// A pass store (passwordstore.org) as `keyjar sync` uses it, through the real `git` and `gpg`
/// with the options `pass` gives them: entries `PATH.gpg` encrypted to the keys its nearest
/// `.gpg-id` names, every change a git commit. Plain text goes to and comes from `gpg` through
/// pipes only.
struct PassStore {
    let directory: String

    /// Why a step failed, in words for the user (what git or gpg said; never an entry's text).
    struct Failure: Error, CustomStringConvertible {
        var description: String
        /// The remote could not be reached (offline): this machine's side can still be synced.
        var isFetch = false
    }

    /// The options `pass` itself runs gpg with (`GPG_OPTS`).
    private static let gpgOptions = [
        "--quiet", "--yes", "--compress-algo=none", "--no-encrypt-to", "--batch", "--use-agent",
    ]

    // MARK: - git

    @discardableResult
    func git(
        _ arguments: [String],
        input: [UInt8] = [],
        allowing failure: Bool = false
    ) throws(Failure) -> ProgramRun.Result {
        let result: ProgramRun.Result
        do {
            result = try ProgramRun.run(
                ["git", "-C", directory] + arguments,
                input: input,
                environment: Self.gitEnvironment
            )
        } catch {
            throw Failure(description: "cannot run git: \(error)")
        }
        if result.status != 0 && !failure {
            throw Failure(description: "git \(arguments.first ?? "") failed: \(result.errorText())")
        }
        return result
    }

    func gitText(_ arguments: [String]) throws(Failure) -> String {
        String(decoding: try git(arguments).output, as: UTF8.self)
    }

    var isRepository: Bool { (try? git(["rev-parse", "--is-inside-work-tree"], allowing: true).status) == 0 }

    /// The remote the store pulls from and pushes to (`origin`), if it has one.
    var remote: String? {
        guard let result = try? git(["remote"], allowing: true), result.status == 0 else { return nil }
        let remotes = String(decoding: result.output, as: UTF8.self).split(separator: "\n").map(String.init)
        return remotes.contains("origin") ? "origin" : remotes.first
    }

    /// The current commit; nil before the first.
    var head: String? {
        guard let result = try? git(["rev-parse", "--verify", "-q", "HEAD"], allowing: true), result.status == 0
        else { return nil }
        return String(decoding: result.output, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Every entry committed at HEAD: its path without `.gpg`, and its blob's id (which changes
    /// with every write of it, by Keyjar or by `pass edit`).
    func entries() throws(Failure) -> [String: String] {
        guard head != nil else { return [:] }
        var found: [String: String] = [:]
        // -z: names with spaces or non-ASCII come as they are.
        let listing = try git(["ls-tree", "-r", "-z", "HEAD"]).output
        for record in listing.split(separator: 0) {
            let text = String(decoding: record, as: UTF8.self)
            guard let tab = text.firstIndex(of: "\t") else { continue }
            let fields = text[..<tab].split(separator: " ")
            let path = String(text[text.index(after: tab)...])
            guard fields.count == 3, fields[1] == "blob", path.hasSuffix(".gpg"), !path.hasPrefix(".") else { continue }
            found[String(path.dropLast(4))] = String(fields[2])
        }
        return found
    }

    /// What a sync that was killed can leave: a merge half done (aborted: this sync merges
    /// again), and git's index lock, when git itself was killed. Called holding the sync lock,
    /// which every process of an earlier sync held until it ended, so no git of it still runs.
    func recoverFromAnInterruptedSync() throws(Failure) {
        let gitDirectory = (directory as NSString).appendingPathComponent(".git")
        unlink(gitDirectory + "/index.lock")
        // An entry gpg was writing when the sync was killed: never committed as an entry.
        let files = FileManager.default.enumerator(atPath: directory)
        while let file = files?.nextObject() as? String {
            if file == ".git" {
                files?.skipDescendants()
            } else if file.hasSuffix(Self.temporarySuffix) {
                unlink((directory as NSString).appendingPathComponent(file))
            }
        }
        if FileManager.default.fileExists(atPath: gitDirectory + "/MERGE_HEAD") {
            try git(["merge", "--abort"])
        }
    }

    /// A remote that wants a password git cannot find fails at once rather than wait for a
    /// terminal nobody watches (`keyjar sync --watch`, a timer): git's own credential helpers,
    /// Keyjar's among them, still answer.
    private static var gitEnvironment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["GIT_TERMINAL_PROMPT"] = "0"
        return environment
    }

    /// The suffix of an entry being written, renamed onto the entry once whole.
    static let temporarySuffix = ".gpg.keyjar-new"

    /// Commits whatever is changed in the store (an interrupted sync's writes too).
    func commitAll(_ message: String) throws(Failure) {
        try git(["add", "-A"])
        let status = try git(["status", "--porcelain"]).output
        guard !status.isEmpty else { return }
        try git(identity + ["commit", "-q", "-m", message])
    }

    /// git needs a name and address for a commit: the user's own where configured, else Keyjar's.
    var identity: [String] {
        let configured = (try? git(["config", "user.email"], allowing: true))?.output.isEmpty == false
        return configured ? [] : ["-c", "user.name=keyjar sync", "-c", "user.email=keyjar@localhost"]
    }

    // MARK: - gpg

    /// The keys an entry at `path` is encrypted to: the nearest `.gpg-id` from its directory up.
    func recipients(for path: String) throws(Failure) -> [String] {
        var directory = (path as NSString).deletingLastPathComponent
        while true {
            let file = (self.directory as NSString).appendingPathComponent(
                directory.isEmpty ? ".gpg-id" : directory + "/.gpg-id"
            )
            if let text = try? String(contentsOfFile: file, encoding: .utf8) {
                let keys = text.split(separator: "\n").map { $0.split(separator: "#").first.map(String.init) ?? "" }
                    .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                guard !keys.isEmpty else { throw Failure(description: "\(file) names no key") }
                return keys
            }
            if directory.isEmpty { break }
            directory = (directory as NSString).deletingLastPathComponent
        }
        throw Failure(description: "the store at \(self.directory) has no .gpg-id: `keyjar sync init` names the key")
    }

    /// Writes `text` encrypted as the entry `path`: a whole new file renamed into place.
    func write(_ text: String, to path: String) throws(Failure) {
        let file = (directory as NSString).appendingPathComponent(path + ".gpg")
        do {
            try FileManager.default.createDirectory(
                atPath: (file as NSString).deletingLastPathComponent,
                withIntermediateDirectories: true
            )
        } catch {
            throw Failure(description: "cannot make the directory of \(path): \(error.localizedDescription)")
        }
        let temporary = (directory as NSString).appendingPathComponent(path + Self.temporarySuffix)
        var arguments = ["gpg"] + Self.gpgOptions + ["--encrypt", "--output", temporary]
        for key in try recipients(for: path) { arguments += ["--recipient", key] }
        var plain = Array(text.utf8)
        defer { plain.wipe() }
        let result: ProgramRun.Result
        do {
            result = try ProgramRun.run(arguments, input: plain)
        } catch {
            throw Failure(description: "cannot run gpg: \(error)")
        }
        guard result.status == 0, rename(temporary, file) == 0 else {
            unlink(temporary)
            throw Failure(description: "gpg could not encrypt \(path): \(result.errorText())")
        }
    }

    /// The entry `path`'s text, decrypted; or a committed version of it (`git show REV:PATH.gpg`),
    /// or the version a blob holds.
    func read(_ path: String, at revision: String? = nil, blob: String? = nil) throws(Failure) -> String {
        var encrypted: [UInt8]
        if let blob {
            encrypted = try git(["cat-file", "blob", blob]).output
        } else if let revision {
            encrypted = try git(["show", "\(revision):\(path).gpg"]).output
        } else {
            guard
                let data = FileManager.default.contents(
                    atPath: (directory as NSString).appendingPathComponent(path + ".gpg")
                )
            else { throw Failure(description: "cannot read the entry \(path)") }
            encrypted = Array(data)
        }
        let result: ProgramRun.Result
        do {
            result = try ProgramRun.run(["gpg"] + Self.gpgOptions + ["--decrypt"], input: encrypted)
        } catch {
            throw Failure(description: "cannot run gpg: \(error)")
        }
        encrypted.wipe()
        var plain = result.output
        defer { plain.wipe() }
        guard result.status == 0 else {
            throw Failure(description: "gpg could not decrypt \(path): \(result.errorText())")
        }
        return String(decoding: plain, as: UTF8.self)
    }
}
