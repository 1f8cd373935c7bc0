package import KeyjarCodec
import KeyjarCore

// What keyjard sends: `{"<case>":{<its values by label>}}`, an absent value for a nil optional.

extension JSONWriter {
    mutating func write(_ message: ServerMessage) {
        switch message {
        case .reply(let id, let response):
            raw(#"{"reply":{"id":"#)
            write(integer: id)
            raw(#","response":"#)
            write(response)
        case .failure(let id, let error):
            raw(#"{"failure":{"#)
            if let id {
                raw(#""id":"#)
                write(integer: id)
                raw(",")
            }
            raw(#""error":"#)
            write(error)
        case .event(let event):
            // The layout of ``MessageCoding/eventPayload(sequence:eventJSON:)``.
            raw(#"{"event":{"event":"#)
            write(event)
        case .snapshot(let snapshot):
            // Every client starts from one, and a jar of 10,000 cookies took Foundation's coders
            // tens of milliseconds each way.
            raw(#"{"snapshot":{"snapshot":"#)
            write(snapshot)
        case .resynchronise(let sequence):
            raw(#"{"resynchronise":{"sequence":"#)
            write(integer: sequence)
        }
        raw("}}")
    }
}

extension ServerMessage {
    static let cases = ["reply", "failure", "event", "snapshot", "resynchronise"]

    package init(json: JSONValue) throws(JSONShapeError) {
        let (name, body) = try json.enumCase(of: Self.cases)
        do {
            switch name {
            case "reply":
                self = .reply(id: try body.uint64("id"), response: try body.required("response", Response.init(json:)))
            case "failure":
                self = .failure(
                    id: try body.optionalInteger("id", as: UInt64.self),
                    error: try body.required("error", WireError.init(json:))
                )
            case "event": self = .event(event: try body.required("event", SequencedEvent.init(json:)))
            case "snapshot": self = .snapshot(snapshot: try body.required("snapshot", StoreSnapshot.init(json:)))
            default: self = .resynchronise(sequence: try body.uint64("sequence"))
            }
        } catch {
            throw error.under(name)
        }
    }

    /// A pushed cookie event exactly as keyjard writes it (``MessageCoding/eventPayload(sequence:eventJSON:)``),
    /// read without a JSON tree: every subscriber of every process decodes each change, and
    /// building the tree was most of that work. Anything else answers nil, for the tree reader.
    init?(canonicalEvent bytes: UnsafeBufferPointer<UInt8>) {
        var reader = JSONReader(bytes: bytes)
        guard reader.skip(#"{"event":{"event":{"sequence":"#), let sequence = reader.readUInt64(),
            reader.skip(#","event":"#), let event = StoreEvent(canonical: &reader), reader.skip("}}}"), reader.isAtEnd
        else { return nil }
        self = .event(event: SequencedEvent(sequence: sequence, event: event))
    }
}
