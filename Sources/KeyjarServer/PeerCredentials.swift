import Glibc
import NIOCore

/// The identity of the process at the other end of a Unix socket, from `SO_PEERCRED`.
struct PeerCredentials: Sendable {
    var pid: Int32
    var uid: UInt32

    /// Reads the peer of a connected Unix-domain channel.
    static func of(_ channel: any Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(ServerError("the connection does not expose socket options"))
        }
        let credentials: EventLoopFuture<LinuxPeerCredentials> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET),
            name: SocketOptionName(SO_PEERCRED)
        )
        return credentials.map { PeerCredentials(pid: $0.pid, uid: $0.uid) }
    }
}

/// Linux's `struct ucred` (pid_t, uid_t, gid_t), which Swift's Glibc module leaves out because
/// it needs `_GNU_SOURCE`; the layout is fixed by the kernel ABI.
struct LinuxPeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0
}
