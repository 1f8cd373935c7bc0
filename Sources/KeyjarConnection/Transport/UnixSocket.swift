package import FoundationEssentials
import Glibc
import KeyjarPlatform

/// A connected Unix stream socket: connect, send everything, receive with a timeout. Equal when
/// the descriptor is (a descriptor closed and reused is a new socket: compare while it is open).
package struct UnixSocket: Sendable, Equatable {
    package let descriptor: CInt

    /// A socket already connected: one that ``connect(path:)`` checked, or one end of a
    /// socketpair (tests, the benchmark).
    package init(descriptor: CInt) {
        self.descriptor = descriptor
    }

    /// Why a connect failed; `errno` tells "nobody listens" (ENOENT, ECONNREFUSED) from others.
    /// A `refusal` is a socket that something other than this user's keyjard may be serving.
    package struct ConnectError: Error, Sendable, CustomStringConvertible {
        package var path: String
        package var errno: Int32
        package var refusal: String?

        package init(path: String, errno: Int32, refusal: String? = nil) {
            self.path = path
            self.errno = errno
            self.refusal = refusal
        }

        /// True when no keyjard is serving the path (so starting one may help).
        package var nobodyListening: Bool { refusal == nil && (errno == ENOENT || errno == ECONNREFUSED) }
        package var description: String {
            if let refusal { return "refusing to use \(path): \(refusal)" }
            return "cannot connect to \(path): \(String(cString: strerror(errno)))"
        }
    }

    /// Connects to the keyjard serving `path`, having checked that it is this user's before
    /// anything is sent: the socket's directory is a real directory of this user that nobody
    /// else can enter (as keyjard makes it), and the process at the other end runs as this user
    /// (`SO_PEERCRED`). Either could be another local user's otherwise (a pre-created
    /// `/tmp/keyjar-UID`), who would then be sent passwords.
    package static func connect(path: String) throws(ConnectError) -> UnixSocket {
        let directory = PathName.directory(of: path)
        if let problem = PrivateDirectory.problem(with: directory.isEmpty ? "." : directory) {
            var missing = stat()
            // Not there yet: nobody listens (a client may start keyjard, which makes it).
            if lstat(directory, &missing) != 0, Glibc.errno == ENOENT { throw ConnectError(path: path, errno: ENOENT) }
            throw ConnectError(path: path, errno: EPERM, refusal: "its directory \(problem)")
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ConnectError(path: path, errno: errno) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(path.utf8)
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(descriptor)
            throw ConnectError(path: path, errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in pathBytes.enumerated() { raw[index] = byte }
        }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else {
            let failure = errno
            Glibc.close(descriptor)
            throw ConnectError(path: path, errno: failure)
        }
        guard let peer = SocketPeer.of(descriptor: descriptor), peer.uid == geteuid() else {
            let peer = SocketPeer.of(descriptor: descriptor)
            Glibc.close(descriptor)
            throw ConnectError(
                path: path,
                errno: EPERM,
                refusal: peer.map {
                    "the process serving it (pid \($0.pid)) runs as uid \($0.uid), not as you (uid \(geteuid()))"
                }
                    ?? "the process serving it cannot be identified (SO_PEERCRED)"
            )
        }
        return UnixSocket(descriptor: descriptor)
    }

    package func sendAll(_ bytes: [UInt8]) throws(ConnectionError) {
        if let failure = FileDescriptor.writeAll(bytes, to: descriptor, by: .sendWithoutSignal) {
            throw ConnectionError("send failed: \(String(cString: strerror(failure)))")
        }
    }

    /// Reads what is available into `buffer`: the byte count, 0 at end of stream, nil when
    /// nothing arrived within `timeout`.
    package func receive(into buffer: inout [UInt8], timeout: TimeInterval) throws(ConnectionError) -> Int? {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, Int32(max(0, min(timeout, 3600)) * 1000))
        if ready == 0 || (ready < 0 && errno == EINTR) { return nil }
        guard ready > 0 else { throw ConnectionError("poll failed: \(String(cString: strerror(errno)))") }
        let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
        if count < 0 {
            if errno == EINTR || errno == EAGAIN { return nil }
            if errno == ECONNRESET { return 0 }
            throw ConnectionError("receive failed: \(String(cString: strerror(errno)))")
        }
        return count
    }

    /// How long a caller that has just sent a request reads for its reply without sleeping
    /// (``receiveWithoutSleeping(into:until:)``) before it waits in the kernel: long enough for
    /// keyjard to answer a one-cookie write, whose reply a cross-CPU wake-up would delay
    /// (docs/performance.md, Replica lookups and writes). Bounded, so a slow answer (an import)
    /// costs at most this much CPU.
    package static let awakeForReply: UInt64 = 250_000

    /// Reads what arrives before `deadline` (``monotonicNanoseconds()``) without sleeping:
    /// tries a non-blocking read, yields the CPU, and tries again. The count, 0 at end of
    /// stream, nil when nothing came in time.
    ///
    /// Why not just block: on a small VM, waking a thread that sleeps on another CPU costs
    /// more than keyjard needs to commit and answer. A caller that has just sent a
    /// request and expects its reply within that time gets it sooner by staying awake, and
    /// yielding between tries lets keyjard have the CPU if it shares this one.
    package func receiveWithoutSleeping(
        into buffer: inout [UInt8],
        until deadline: UInt64
    ) throws(ConnectionError) -> Int? {
        while true {
            let count = buffer.withUnsafeMutableBytes {
                recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT))
            }
            if count >= 0 { return count }
            switch errno {
            case EAGAIN, EINTR: break
            case ECONNRESET: return 0
            default: throw ConnectionError("receive failed: \(String(cString: strerror(errno)))")
            }
            if monotonicNanoseconds() >= deadline { return nil }
            sched_yield()
        }
    }

    /// Reads what is available, waiting for it in the kernel as long as it takes: the count,
    /// 0 at end of stream (or when ``shutdownBoth()`` was called meanwhile).
    package func receiveBlocking(into buffer: inout [UInt8]) throws(ConnectionError) -> Int {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, 0) }
            if count >= 0 { return count }
            switch errno {
            case EINTR: continue
            case ECONNRESET: return 0
            default: throw ConnectionError("receive failed: \(String(cString: strerror(errno)))")
            }
        }
    }

    /// Waits until bytes or the end of stream can be read, without reading: true when they
    /// can, false when `timeout` ran out.
    package func waitForBytes(timeout: TimeInterval) throws(ConnectionError) -> Bool {
        var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&poller, 1, Int32(max(0, min(timeout, 3600)) * 1000))
        if ready < 0 && errno != EINTR { throw ConnectionError("poll failed: \(String(cString: strerror(errno)))") }
        return ready > 0
    }

    /// Wakes a thread blocked in `waitForBytes`, `receive` or `receiveBlocking` and ends the
    /// connection.
    package func shutdownBoth() { shutdown(descriptor, Int32(SHUT_RDWR)) }

    package func close() { Glibc.close(descriptor) }
}

/// CLOCK_MONOTONIC in nanoseconds.
package func monotonicNanoseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
}
