import Foundation
import Glibc

/// The stress harness's full disk: keyjard's directory on a tmpfs of the harness's own (a
/// private mount namespace, so the mount is nobody else's and goes with the harness), which a
/// ballast file fills for a moment now and then.
final class StressDisk: @unchecked Sendable {
    // @unchecked: only the episode thread uses it while the run lasts.
    private let ballast: String

    /// With `KEYJAR_STRESS_DISK_FULL` set, runs this harness again in a private mount namespace
    /// (`unshare`; needs root), where `init(directory:)` may mount. Returns only when already
    /// there, or when no disk episodes were asked for.
    static func enterPrivateMountNamespaceIfNeeded(episodes: Int) throws {
        let marker = "KEYJAR_STRESS_PRIVATE_MOUNTS"
        guard episodes > 0, ProcessInfo.processInfo.environment[marker] == nil else { return }
        guard getuid() == 0 else {
            throw BenchmarkError("KEYJAR_STRESS_DISK_FULL needs root (a tmpfs in a private mount namespace)")
        }
        setenv(marker, "1", 1)
        let arguments = ["/usr/bin/unshare", "--mount", "--propagation", "private"] + CommandLine.arguments
        var argv = arguments.map { strdup($0) } + [nil]
        execv(arguments[0], &argv)
        throw BenchmarkError("cannot run unshare: \(String(cString: strerror(errno)))")
    }

    /// Mounts a tmpfs of `size` (e.g. "64m") on `directory`.
    init(directory: String, size: String) throws {
        let mount = Process()
        mount.executableURL = URL(fileURLWithPath: "/bin/mount")
        mount.arguments = ["-t", "tmpfs", "-o", "size=\(size),mode=0700", "keyjar-stress", directory]
        try mount.run()
        mount.waitUntilExit()
        guard mount.terminationStatus == 0 else { throw BenchmarkError("cannot mount a tmpfs on \(directory)") }
        ballast = directory + "/ballast"
    }

    /// Writes the ballast until the file system refuses more.
    func fill() throws {
        let descriptor = open(ballast, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else {
            throw BenchmarkError("cannot create the ballast: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let chunk = [UInt8](repeating: 0, count: 1 << 16)
        while chunk.withUnsafeBytes({ write(descriptor, $0.baseAddress, $0.count) }) > 0 {}
        guard errno == ENOSPC else { throw BenchmarkError("ballast: \(String(cString: strerror(errno)))") }
    }

    func free() { unlink(ballast) }
}
