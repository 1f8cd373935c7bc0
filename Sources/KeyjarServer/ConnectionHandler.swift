import Glibc
import KeyjarProtocol
import Logging
import NIOCore

/// Serves one client connection: checks the peer, then reads framed requests in order and
/// answers each, while a second task drains the client's queue to the socket.
///
/// A malformed frame or message ends this connection only (with an error reply when possible);
/// the other clients never notice.
enum ConnectionHandler {
    static func serve(
        _ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>, id: UInt64, service: KeyjarService,
        queueLimit: Int, logger: Logger
    ) async {
        var logger = logger
        logger[metadataKey: "connection"] = "\(id)"
        let peer: PeerCredentials
        do {
            peer = try await PeerCredentials.of(connection.channel)
        } catch {
            logger.warning("cannot read the peer's credentials; closing", metadata: ["error": "\(error)"])
            try? await connection.channel.close()
            return
        }
        logger[metadataKey: "peer.pid"] = "\(peer.pid)"
        guard peer.uid == getuid() else {
            logger.warning("refused a client of another user", metadata: ["peer.uid": "\(peer.uid)"])
            let refusal = ServerMessage.failure(
                id: nil, error: WireError(code: WireError.handshakeRequired, message: "keyjard serves only its own user"))
            try? await connection.executeThenClose { _, outbound in
                try await outbound.write(ByteBuffer(bytes: MessageCoding.encode(refusal)))
            }
            return
        }

        do {
            try await connection.executeThenClose { inbound, outbound in
                let (outbox, continuation) = AsyncStream.makeStream(
                    of: [UInt8].self, bufferingPolicy: .bufferingOldest(queueLimit))
                let channel = connection.channel
                let client = ClientConnection(id: id, pid: peer.pid, outbox: continuation) { channel.close(promise: nil) }
                await service.register(client)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await payload in outbox { try await outbound.write(ByteBuffer(bytes: payload)) }
                    }
                    await readRequests(inbound, client: client, service: service, logger: logger)
                    continuation.finish()
                    try await group.waitForAll()
                }
                await service.unregister(client)
            }
        } catch {
            logger.debug("connection ended", metadata: ["error": "\(error)"])
        }
    }

    private static func readRequests(
        _ inbound: NIOAsyncChannelInboundStream<ByteBuffer>, client: ClientConnection, service: KeyjarService,
        logger: Logger
    ) async {
        var greeted = false
        do {
            for try await frame in inbound {
                let message: ClientMessage
                do {
                    message = try MessageCoding.decode(ClientMessage.self, from: frame.readableBytesView)
                } catch {
                    logger.info("malformed message; closing the connection", metadata: ["error": "\(error.message)"])
                    client.send(.failure(id: nil, error: error))
                    return
                }
                if !greeted {
                    guard case .hello(let version, let name) = message.request else {
                        client.send(.failure(id: message.id, error: WireError(
                            code: WireError.handshakeRequired, message: "the first request must be hello")))
                        return
                    }
                    guard version == ProtocolVersion.current else {
                        client.send(.failure(id: message.id, error: WireError(
                            code: WireError.unsupportedVersion,
                            message: "protocol version \(version) is not supported; this keyjard speaks \(ProtocolVersion.current)")))
                        return
                    }
                    greeted = true
                    logger.debug("client connected", metadata: ["client.name": "\(name)"])
                }
                do {
                    let response = try await service.handle(message.request, from: client)
                    client.send(.reply(id: message.id, response: response))
                } catch {
                    client.send(.failure(id: message.id, error: error))
                }
            }
        } catch let error as FrameDecodingError {
            logger.info("malformed frame; closing the connection", metadata: ["error": "\(error)"])
            client.send(.failure(id: nil, error: WireError(code: WireError.malformedFrame, message: error.description)))
        } catch {
            logger.debug("read failed", metadata: ["error": "\(error)"])
        }
    }
}
