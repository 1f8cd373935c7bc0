public import Foundation
import Glibc
import KeyjarCore
public import KeyjarProtocol

/// A blocking protocol client for tests: independent of the client library, so the server is
/// tested against the wire format itself.
public final class TestClient {
    private let descriptor: CInt
    private var parser = FrameParser()
    private var nextID: UInt64 = 0
    /// Events and snapshots that arrived while waiting for a reply.
    public private(set) var pushed: [ServerMessage] = []

    /// Connects; with `hello`, also performs the handshake.
    public init(socketPath: String, hello: Bool = true) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { throw TestSupportError("socket() failed") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let pathBytes = Array(socketPath.utf8)
        guard pathBytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw TestSupportError("path too long") }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (index, byte) in pathBytes.enumerated() { raw[index] = byte }
        }
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard status == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw TestSupportError("connect to \(socketPath) failed: \(reason)")
        }
        if hello {
            let response = try call(.hello(version: ProtocolVersion.current, client: "keyjar-tests"))
            guard case .hello = response else { throw TestSupportError("unexpected hello reply \(response)") }
        }
    }

    deinit { close(descriptor) }

    /// Sends raw bytes (for malformed-input tests).
    public func sendRaw(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard written > 0 else { throw TestSupportError("send failed: \(String(cString: strerror(errno)))") }
            offset += written
        }
    }

    @discardableResult
    public func send(_ request: Request) throws -> UInt64 {
        nextID += 1
        try sendRaw(Framing.frame(MessageCoding.encode(ClientMessage(id: nextID, request: request))))
        return nextID
    }

    /// The next message from keyjard, nil on end of stream or after `timeout`.
    public func receive(timeout: TimeInterval = 10) throws -> ServerMessage? {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let payload = try parser.next() { return try MessageCoding.decode(ServerMessage.self, from: payload) }
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return nil }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(min(remaining, 1) * 1000)) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            parser.append(buffer[0..<count])
        }
    }

    /// Sends a request and returns its reply; pushed messages meanwhile are kept in `pushed`.
    public func call(_ request: Request, timeout: TimeInterval = 10) throws -> Response {
        let id = try send(request)
        while let message = try receive(timeout: timeout) {
            switch message {
            case .reply(id, let response): return response
            case .failure(let failedID, let error) where failedID == id || failedID == nil: throw error
            default: pushed.append(message)
            }
        }
        throw TestSupportError("no reply to \(id) within \(timeout) s (connection closed or silent)")
    }

    /// The next pushed event or snapshot (already received ones first).
    public func nextPushed(timeout: TimeInterval = 10) throws -> ServerMessage? {
        if !pushed.isEmpty { return pushed.removeFirst() }
        return try receive(timeout: timeout)
    }

    /// Sets cookies as a response from `url` would, returning each line's outcome.
    @discardableResult
    public func setCookies(_ headers: [String], from url: String, mainDocument: String? = nil) throws -> [CookieOutcome] {
        let response = try call(.setCookies(headers: headers, context: WireCookieContext(url: url, mainDocumentURL: mainDocument)))
        guard case .cookieOutcomes(let outcomes, _) = response else { throw TestSupportError("unexpected \(response)") }
        return outcomes
    }

    public func cookieHeader(for url: String) throws -> String? {
        let response = try call(.cookieHeader(context: WireCookieContext(url: url)))
        guard case .cookieHeader(let header) = response else { throw TestSupportError("unexpected \(response)") }
        return header
    }

    public func snapshot() throws -> StoreSnapshot {
        let response = try call(.snapshot)
        guard case .snapshot(let snapshot) = response else { throw TestSupportError("unexpected \(response)") }
        return snapshot
    }
}
