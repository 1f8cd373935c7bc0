import Glibc

/// The process at the other end of a connected Unix socket, from `SO_PEERCRED`: Linux's
/// `struct ucred` (pid_t, uid_t, gid_t), which Swift's Glibc module leaves out because it needs
/// `_GNU_SOURCE`; the layout is fixed by the kernel ABI. keyjard checks each client with it, and
/// each client checks keyjard before it sends anything.
package struct SocketPeer: Sendable, Equatable {
    package var pid: Int32 = 0
    package var uid: UInt32 = 0
    package var gid: UInt32 = 0

    package init() {}

    /// The peer of the connected Unix socket `descriptor`; nil (errno set) when it has none.
    package static func of(descriptor: Int32) -> SocketPeer? {
        var peer = SocketPeer()
        var length = socklen_t(MemoryLayout<SocketPeer>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &peer, &length) == 0,
            length == socklen_t(MemoryLayout<SocketPeer>.size)
        else { return nil }
        return peer
    }
}
