import Glibc
import KeyjarCommands
import KeyjarPlatform

/// `keyjar run --mask`: the command runs with its standard output and error on pipes that
/// keyjar reads, masks (``SecretMask``, one per stream, since a value may be split across two
/// writes of one stream but never across the two streams) and writes on, until both end; then
/// keyjar ends as the command did.
enum MaskedChild {
    /// The signals passed on to the command when a process sends them to keyjar (kill(1)); the
    /// terminal's (Ctrl-C) reach the command by themselves, as part of the foreground group.
    static let relayed = [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2]

    static func run(_ command: [String], setting values: [(name: String, value: String)], mask: SecretMask) -> Never {
        var environment: [String: String] = [:]
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if let equals = text.firstIndex(of: "=") {
                environment[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            entry += 1
        }
        for (name, value) in values { environment[name] = value }

        let output = pipe()
        let errors = pipe()
        let signals = pipe(nonBlocking: true)
        SignalRelay.record(relayed, into: signals.write)
        var options = ProcessSpawn.Options(
            standardOutput: .descriptor(output.write),
            standardError: .descriptor(errors.write),
            environment: environment
        )
        options.searchesPath = true
        let child: Int32
        do {
            child = try ProcessSpawn.start(command, options)
        } catch {
            fail(CLIError.cannotRun(command[0], errorNumber: error.errorNumber))
        }
        close(output.write)
        close(errors.write)

        var streams = [
            Stream(source: output.read, target: STDOUT_FILENO, mask: mask),
            Stream(source: errors.read, target: STDERR_FILENO, mask: mask),
        ]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while streams.contains(where: \.isOpen) {
            var watched = streams.filter(\.isOpen).map { pollfd(fd: $0.source, events: Int16(POLLIN), revents: 0) }
            watched.append(pollfd(fd: signals.read, events: Int16(POLLIN), revents: 0))
            guard poll(&watched, nfds_t(watched.count), -1) >= 0 else {
                if errno == EINTR { continue }
                fail(CLIError.failure("cannot watch the command's output: \(String(cString: strerror(errno)))."))
            }
            if watched[watched.count - 1].revents != 0 { relaySignals(from: signals.read, to: child) }
            for index in streams.indices where streams[index].isOpen {
                guard let ready = watched.first(where: { $0.fd == streams[index].source }), ready.revents != 0 else {
                    continue
                }
                streams[index].pass(using: &buffer)
            }
        }
        let exit = ProcessSpawn.wait(child)
        if exit.wasSignalled {
            // Ends keyjar as the command ended, so that its caller sees the same (a shell
            // reports the signal, and a Ctrl-C stops the script that ran keyjar).
            let number = exit.status - 128
            signal(number, SIG_DFL)
            raise(number)
        }
        Glibc.exit(exit.status)
    }

    /// One of the command's output streams, masked on its way to keyjar's own.
    private struct Stream {
        let source: Int32
        let target: Int32
        var mask: SecretMask
        var isOpen = true
        /// The target failed (a reader that went away): the rest is read and dropped, so that
        /// the command is not stopped by keyjar, but by its own next write to a closed pipe.
        var targetFailed = false

        init(source: Int32, target: Int32, mask: SecretMask) {
            self.source = source
            self.target = target
            self.mask = mask
        }

        mutating func pass(using buffer: inout [UInt8]) {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { return }
            guard count > 0 else {
                write(mask.finish())
                close(source)
                isOpen = false
                return
            }
            write(mask.filter(buffer[..<count]))
        }

        private mutating func write(_ bytes: [UInt8]) {
            guard !bytes.isEmpty, !targetFailed else { return }
            if FileDescriptor.writeAll(bytes, to: target) != nil {
                targetFailed = true
                close(source)
                isOpen = false
            }
        }
    }

    /// Passes on each signal a process sent; the terminal's already reached the command.
    private static func relaySignals(from descriptor: Int32, to child: Int32) {
        for received in SignalRelay.drain(descriptor) where received.sentByProcess { kill(child, received.signal) }
    }

    /// A pipe, or keyjar ends before the command starts.
    private static func pipe(nonBlocking: Bool = false) -> (read: Int32, write: Int32) {
        guard let ends = FileDescriptor.pipe(nonBlocking: nonBlocking) else {
            fail(CLIError.failure("cannot start the command: \(String(cString: strerror(errno)))."))
        }
        return ends
    }

    private static func fail(_ error: CLIError) -> Never {
        Output.error(error.message)
        Glibc.exit(error.status.rawValue)
    }
}
