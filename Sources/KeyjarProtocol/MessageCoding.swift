import KeyjarCodec

/// The JSON of the protocol's messages (Schemas/protocol.md), written and read by hand: the one
/// definition of the format, which Tests/KeyjarProtocolTests/Golden and
/// Schemas/protocol.schema.json are checked against.
///
/// Written by hand because a message is coded on every acknowledged write, and Foundation's
/// coders cost several times as much (docs/performance.md, Engine and wire coding). Reading
/// accepts what the format allows, in any member order, with members it does not know ignored
/// and optional ones absent or null; anything else is a ``WireError/malformedMessage`` that
/// names the field.
public enum MessageCoding {
    public static func encode(_ message: ClientMessage) -> [UInt8] {
        var writer = JSONWriter()
        // Room for a common message at once rather than growing into it.
        writer.bytes.reserveCapacity(256)
        writer.write(message)
        return writer.bytes
    }

    public static func encode(_ message: ServerMessage) -> [UInt8] {
        var writer = JSONWriter()
        writer.bytes.reserveCapacity(256)
        writer.write(message)
        return writer.bytes
    }

    public static func decode(
        _ type: ClientMessage.Type,
        from payload: some Sequence<UInt8>
    ) throws(WireError) -> ClientMessage {
        try decode(payload, as: ClientMessage.init(json:))
    }

    public static func decode(
        _ type: ServerMessage.Type,
        from payload: some Sequence<UInt8>
    ) throws(WireError) -> ServerMessage {
        try decodeServerMessage(payload)
    }

    /// The same for a frame's payload as the client's reader holds it. A generic called from
    /// another module runs unspecialised, through `Sequence`'s witnesses and type metadata
    /// looked up at run time; this one is specialised here. Every listening process decodes
    /// every change through it (docs/performance.md, Notifications in other processes).
    public static func decode(_ type: ServerMessage.Type, from payload: [UInt8]) throws(WireError) -> ServerMessage {
        try decodeServerMessage(payload)
    }

    private static func decodeServerMessage(_ payload: some Sequence<UInt8>) throws(WireError) -> ServerMessage {
        // A pushed cookie event as keyjard writes it is read without a tree: every subscriber
        // of every process decodes each change.
        if let event = payload.withContiguousStorageIfAvailable(ServerMessage.init(canonicalEvent:)), let event {
            return event
        }
        return try decode(payload, as: ServerMessage.init(json:))
    }

    private static func decode<Message>(
        _ payload: some Sequence<UInt8>,
        as read: (JSONValue) throws(JSONShapeError) -> Message
    ) throws(WireError) -> Message {
        var parsed = payload.withContiguousStorageIfAvailable(JSONReader.parse)
        if parsed == nil {
            // The copy may hold a password (a setCredential request, a password reply): zeroed
            // once read.
            var copy = Array(payload)
            parsed = JSONReader.parse(copy)
            Framing.wipe(&copy, upTo: copy.count)
        }
        guard let json = parsed ?? nil else { throw malformed("not valid JSON") }
        do {
            return try read(json)
        } catch {
            throw malformed(error.description)
        }
    }

    private static func malformed(_ reason: String) -> WireError {
        WireError(code: WireError.malformedMessage, message: "malformed message: \(reason)")
    }

    /// The pushed message for a logged event, from the event's JSON as the change log keeps it
    /// (so keyjard encodes each event once, whatever the number of subscribers).
    public static func eventPayload(sequence: UInt64, eventJSON: String) -> String {
        #"{"event":{"event":{"sequence":\#(sequence),"event":\#(eventJSON)}}}"#
    }
}
