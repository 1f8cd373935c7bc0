// keyjard's protocol without any Keyjar module, as a program in another language would speak
// it: frames of JSON over the socket (Schemas/protocol.md). Swift programs use `Keyjar`.
// snippet: wire
import Foundation
import Glibc

/// A frame is a 4-byte big-endian length, then that many bytes of JSON.
func send(_ json: String, to socket: Int32) {
    let payload = Array(json.utf8)
    let frame = withUnsafeBytes(of: UInt32(payload.count).bigEndian, Array.init) + payload
    let sent = frame.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    precondition(sent == frame.count, "keyjard is gone")
}

func receive(from socket: Int32) -> [String: Any] {
    func read(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes[done...].withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            precondition(got > 0, "keyjard closed the connection")
            done += got
        }
        return bytes
    }
    let length = read(4).reduce(0) { $0 << 8 | Int($1) }
    return (try? JSONSerialization.jsonObject(with: Data(read(length)))) as? [String: Any] ?? [:]
}

/// Whether `directory` is a real directory (not a link) of this user that nobody else may enter.
func isUsersAlone(_ directory: String) -> Bool {
    var info = stat()
    return lstat(directory, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR && info.st_uid == geteuid()
        && info.st_mode & 0o077 == 0
}

// The socket: $KEYJAR_SOCKET, else $XDG_RUNTIME_DIR/keyjar/keyjar.sock, else the login's
// /run/user/UID/keyjar/keyjar.sock when that directory is the user's alone, else
// /tmp/keyjar-UID/keyjar.sock.
let environment = ProcessInfo.processInfo.environment
let uid = geteuid()
let path: String
if let explicit = environment["KEYJAR_SOCKET"], !explicit.isEmpty {
    path = explicit
} else if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
    path = runtime + "/keyjar/keyjar.sock"
} else if isUsersAlone("/run/user/\(uid)") {
    path = "/run/user/\(uid)/keyjar/keyjar.sock"
} else {
    path = "/tmp/keyjar-\(uid)/keyjar.sock"
}

// Nothing is sent before the socket is known to be this user's keyjard's: another local user
// could have made /tmp/keyjar-UID first, and would be sent passwords. Its directory must be the
// user's alone, and the process serving it must run as the user (SO_PEERCRED, below).
let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
precondition(isUsersAlone(directory.isEmpty ? "/" : directory), "refusing \(path): \(directory) is not yours alone")
let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
var address = sockaddr_un()
address.sun_family = sa_family_t(AF_UNIX)
withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8.prefix($0.count - 1)) }
let connected = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
    }
}
precondition(connected == 0, "no keyjard at \(path)")
var peer: (pid: Int32, uid: UInt32, gid: UInt32) = (0, 0, 0)  // Linux's struct ucred
var size = socklen_t(MemoryLayout.size(ofValue: peer))
precondition(
    getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 && peer.uid == uid,
    "refusing \(path): the process serving it does not run as you"
)

// A hello first, then requests with ids; the reply carries the id back.
send(#"{"id": 1, "request": {"hello": {"version": 4, "client": "my-tool"}}}"#, to: socket)
_ = receive(from: socket)
send(#"{"id": 2, "request": {"status": {}}}"#, to: socket)
let reply = receive(from: socket)["reply"] as? [String: Any]
let status = (reply?["response"] as? [String: Any])?["status"] as? [String: Any]
print((status?["status"] as? [String: Any])?["cookieCount"] ?? "no status")
// snippet end
