import Glibc
import KeyjarCommands
import KeyjarPlatform

/// `keyjar run --mask`: the command runs with its standard output and error on pipes that
/// keyjar reads, masks (``SecretMask``, one per stream, since a value may be split across two
/// writes of one stream but never across the two streams) and writes on, until the command has
/// ended and what it wrote is passed; then keyjar ends as the command did.
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
        // Recorded before the command starts (its end, SIGCHLD, among them), and taken on this
        // thread too: Swift's worker threads block some signals.
        SignalRelay.record(relayed + [SIGCHLD], into: signals.write)
        var wanted = sigset_t()
        sigemptyset(&wanted)
        for number in relayed + [SIGCHLD] { sigaddset(&wanted, number) }
        pthread_sigmask(SIG_UNBLOCK, &wanted, nil)
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
        // A reader of keyjar's output that goes away is a failed write here, not the end of
        // keyjar (the command started with SIGPIPE at its default).
        signal(SIGPIPE, SIG_IGN)

        var streams = [
            Stream(source: output.read, target: STDOUT_FILENO, mask: mask),
            Stream(source: errors.read, target: STDERR_FILENO, mask: mask),
        ]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var ended: ProcessSpawn.Exit?
        while ended == nil || streams.contains(where: \.isOpen) {
            // Once the command has ended, only what it already wrote is passed: a program it
            // left running in the background with the pipes does not keep keyjar waiting.
            let afterEnd = ended != nil
            var watched = streams.filter(\.isOpen).map { pollfd(fd: $0.source, events: Int16(POLLIN), revents: 0) }
            watched.append(pollfd(fd: signals.read, events: Int16(POLLIN), revents: 0))
            let ready = poll(&watched, nfds_t(watched.count), afterEnd ? 0 : -1)
            if ready < 0 {
                if errno == EINTR { continue }
                fail(CLIError.failure("cannot watch the command's output: \(String(cString: strerror(errno)))."))
            }
            if watched[watched.count - 1].revents != 0 {
                for received in SignalRelay.drain(signals.read) where received.sentByProcess {
                    kill(child, received.signal)
                }
            }
            var passedSome = false
            for index in streams.indices where streams[index].isOpen {
                guard let polled = watched.first(where: { $0.fd == streams[index].source }), polled.revents != 0 else {
                    continue
                }
                streams[index].pass(using: &buffer)
                passedSome = true
            }
            if ended == nil { ended = ProcessSpawn.exitIfEnded(child) }
            if afterEnd && !passedSome {
                for index in streams.indices where streams[index].isOpen { streams[index].end() }
            }
        }
        end(as: ended ?? ProcessSpawn.wait(child))
    }

    /// Ends keyjar as the command ended, so that its caller sees the same (a shell reports the
    /// signal, and a Ctrl-C stops the script that ran keyjar).
    private static func end(as exit: ProcessSpawn.Exit) -> Never {
        guard exit.wasSignalled else { Glibc.exit(exit.status) }
        let number = exit.status - 128
        // No core file of keyjar (its memory holds the values) for a command that left one.
        var none = rlimit(rlim_cur: 0, rlim_max: 0)
        setrlimit(__rlimit_resource_t(RLIMIT_CORE.rawValue), &none)
        signal(number, SIG_DFL)
        var only = sigset_t()
        sigemptyset(&only)
        sigaddset(&only, number)
        pthread_sigmask(SIG_UNBLOCK, &only, nil)
        raise(number)
        Glibc.exit(exit.status)
    }

    /// One of the command's output streams, masked on its way to keyjar's own.
    private struct Stream {
        let source: Int32
        let target: Int32
        var mask: SecretMask
        var isOpen = true

        init(source: Int32, target: Int32, mask: SecretMask) {
            self.source = source
            self.target = target
            self.mask = mask
        }

        mutating func pass(using buffer: inout [UInt8]) {
            let count = buffer.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { return }
            guard count > 0 else {
                end()
                return
            }
            write(mask.filter(buffer[..<count]))
        }

        /// The end of the stream: what the mask held is written.
        mutating func end() {
            write(mask.finish())
            guard isOpen else { return }
            close(source)
            isOpen = false
        }

        /// A target that fails (a reader that went away) closes the command's pipe too: the
        /// command then meets a closed pipe, as it would have written to one without keyjar.
        private mutating func write(_ bytes: [UInt8]) {
            guard !bytes.isEmpty, isOpen else { return }
            if FileDescriptor.writeAll(bytes, to: target) != nil {
                close(source)
                isOpen = false
            }
        }
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
