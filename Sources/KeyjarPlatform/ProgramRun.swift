import Glibc

/// Running a program to its end with what it reads on standard input, collecting what it
/// writes: how `keyjar sync` drives `git` and `gpg`. A secret goes to the program through the
/// pipe only (never an argument or a file), and the copies of it this process held are wiped.
/// Input and output pass together (poll), so a program that writes before it has read all its
/// input cannot stall on a full pipe.
package enum ProgramRun {
    /// How the program ended, and what it wrote.
    package struct Result: Sendable {
        package var status: Int32
        package var output: [UInt8]
        package var error: [UInt8]

        /// Standard error as one line of text, its end kept when longer than `limit` (for a
        /// message: the last words say what went wrong).
        package func errorText(limit: Int = 400) -> String {
            let words = String(decoding: error, as: UTF8.self).split(whereSeparator: {
                $0 == " " || $0 == "\n" || $0 == "\t"
            })
            let text = words.joined(separator: " ")
            return text.count > limit ? "…" + text.suffix(limit) : text
        }
    }

    /// What a program may write before it is cut off: nothing `keyjar sync` reads comes close.
    package static let outputLimit = 64 << 20

    /// Runs `arguments[0]` (looked up in PATH) with `arguments`, `input` on standard input.
    package static func run(
        _ arguments: [String],
        input: [UInt8] = [],
        environment: [String: String]? = nil
    ) throws(ProcessSpawn.Failure) -> Result {
        guard let stdin = FileDescriptor.pipe(nonBlocking: false), let stdout = FileDescriptor.pipe(),
            let stderr = FileDescriptor.pipe()
        else { throw ProcessSpawn.Failure(program: arguments[0], errorNumber: errno) }
        var options = ProcessSpawn.Options(
            standardInput: .descriptor(stdin.read),
            standardOutput: .descriptor(stdout.write),
            standardError: .descriptor(stderr.write),
            environment: environment
        )
        options.searchesPath = true
        let pid: Int32
        do {
            pid = try ProcessSpawn.start(arguments, options)
        } catch {
            for descriptor in [stdin.read, stdin.write, stdout.read, stdout.write, stderr.read, stderr.write] {
                close(descriptor)
            }
            throw error
        }
        close(stdin.read)
        close(stdout.write)
        close(stderr.write)
        _ = fcntl(stdin.write, F_SETFL, fcntl(stdin.write, F_GETFL) | O_NONBLOCK)

        var pending = input
        defer { pending.wipe() }
        var written = 0
        var writer: Int32? = stdin.write
        if pending.isEmpty {
            close(stdin.write)
            writer = nil
        }
        var output: [UInt8] = []
        var error: [UInt8] = []
        var readers: [Int32] = [stdout.read, stderr.read]
        var chunk = [UInt8](repeating: 0, count: 65_536)
        defer { chunk.wipe() }
        while !readers.isEmpty || writer != nil {
            var watched = readers.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            if let writer { watched.append(pollfd(fd: writer, events: Int16(POLLOUT), revents: 0)) }
            guard poll(&watched, nfds_t(watched.count), -1) >= 0 else {
                if errno == EINTR { continue }
                break
            }
            for polled in watched where polled.revents != 0 {
                if polled.fd == writer {
                    let count = pending[written...].withUnsafeBytes { Glibc.write(polled.fd, $0.baseAddress, $0.count) }
                    if count > 0 { written += count }
                    // Done, or the program stopped reading (EPIPE): no more input.
                    if written == pending.count || (count < 0 && errno != EAGAIN && errno != EINTR) {
                        close(polled.fd)
                        writer = nil
                    }
                    continue
                }
                let count = chunk.withUnsafeMutableBytes { read(polled.fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR || errno == EAGAIN { continue }
                if count <= 0 || output.count + error.count > outputLimit {
                    close(polled.fd)
                    readers.removeAll { $0 == polled.fd }
                } else if polled.fd == stdout.read {
                    output += chunk[..<count]
                } else {
                    error += chunk[..<count]
                }
            }
        }
        if let writer { close(writer) }
        for reader in readers { close(reader) }
        let exit = ProcessSpawn.wait(pid)
        return Result(status: exit.status, output: output, error: error)
    }
}
