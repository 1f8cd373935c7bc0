import Glibc
import KeyjarPlatform
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
        let credentials: EventLoopFuture<SocketPeer> = provider.unsafeGetSocketOption(
            level: SocketOptionLevel(SOL_SOCKET),
            name: SocketOptionName(SO_PEERCRED)
        )
        return credentials.map { PeerCredentials(pid: $0.pid, uid: $0.uid) }
    }
}
