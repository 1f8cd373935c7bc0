public import KeyjarCore

/// The JSON form of a ``StoreEvent``, version 2. Keyjar writes it in two places that must not
/// change together by accident: the wire protocol's `event` messages (Schemas/protocol.md) and
/// keyjard's change log (Schemas/change-log.md), which records this version beside every
/// entry. A new shape gets a new version; readers of the log decide what to do with entries of
/// an older one.
///
/// Version 2 added a cookie's `partitionKey` (absent for an unpartitioned cookie), so a
/// version-1 event reads as the same version-2 event; the reverse would flatten a partitioned
/// cookie, which is why a reader of version 1 never gets version 2.
public enum StoreEventJSON {
    /// The version this build writes.
    public static let version = 2

    /// The event as version-2 JSON.
    public static func encode(_ event: StoreEvent) -> String {
        var writer = JSONWriter()
        writer.write(event)
        return writer.output
    }

    /// A version-1 or version-2 event, or why the bytes are not one.
    public static func decode(_ bytes: some Sequence<UInt8>) throws -> StoreEvent {
        guard let json = JSONReader.parse(Array(bytes)) else { throw StoreEventJSONError(message: "not valid JSON") }
        do {
            return try StoreEvent(json: json)
        } catch {
            throw StoreEventJSONError(message: error.description)
        }
    }
}

/// Why a change log entry is not an event this build reads.
public struct StoreEventJSONError: Error, Sendable, Hashable, CustomStringConvertible {
    public var message: String

    public init(message: String) { self.message = message }

    public var description: String { "not a stored event: \(message)" }
}

// MARK: Writing

extension JSONWriter {
    package mutating func write(_ event: StoreEvent) {
        switch event {
        case .cookies(let changes):
            // An import of 100,000 cookies is one event.
            bytes.reserveCapacity(bytes.count + 64 + changes.count * 260)
            raw(#"{"cookies":{"changes":["#)
            for (index, change) in changes.enumerated() {
                if index > 0 { raw(",") }
                write(change)
            }
            raw("]}}")
        case .policy(let policy):
            raw(#"{"policy":{"policy":"#)
            write(policy)
            raw("}}")
        case .credentials(let changes):
            raw(#"{"credentials":{"changes":["#)
            for (index, change) in changes.enumerated() {
                if index > 0 { raw(",") }
                write(change)
            }
            raw("]}}")
        }
    }

    package mutating func write(_ change: CredentialChange) {
        raw(#"{"kind":"#)
        write(string: change.kind.rawValue)
        raw(#","space":"#)
        write(change.space)
        raw(#","user":"#)
        write(string: change.user)
        if let record = change.record {
            raw(#","record":"#)
            write(record)
        }
        raw("}")
    }

    package mutating func write(_ event: SequencedEvent) {
        raw(#"{"sequence":"#)
        write(integer: event.sequence)
        raw(#","event":"#)
        write(event.event)
        raw("}")
    }
}

// MARK: Reading

extension StoreEvent {
    static let cases = ["cookies", "policy", "credentials"]

    package init(json: JSONValue) throws(JSONShapeError) {
        let (name, body) = try json.enumCase(of: Self.cases)
        do {
            switch name {
            case "cookies":
                self = .cookies(
                    changes: try body.required("changes") { (value) throws(JSONShapeError) in
                        try value.elements(CookieChange.init(json:))
                    }
                )
            case "policy": self = .policy(policy: try body.required("policy", CookiePolicy.init(json:)))
            default:
                self = .credentials(
                    changes: try body.required("changes") { (value) throws(JSONShapeError) in
                        try value.elements(CredentialChange.init(json:))
                    }
                )
            }
        } catch {
            throw error.under(name)
        }
    }
}

extension CredentialChange {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(
            kind: try json.rawValue("kind"),
            space: try json.required("space", ProtectionSpace.init(json:)),
            user: try json.string("user"),
            record: try json.optional("record", CredentialRecord.init(json:))
        )
    }
}

extension SequencedEvent {
    package init(json: JSONValue) throws(JSONShapeError) {
        self.init(sequence: try json.uint64("sequence"), event: try json.required("event", StoreEvent.init(json:)))
    }
}

// MARK: Reading the layout keyjard writes

extension StoreEvent {
    /// A cookie event (`{"cookies":{"changes":[…]}}`) in the writer's layout; anything else
    /// answers nil.
    package init?(canonical reader: inout JSONReader) {
        guard reader.skip(#"{"cookies":{"changes":["#) else { return nil }
        var changes: [CookieChange] = []
        if !reader.skip("]") {
            repeat {
                guard let change = CookieChange(canonical: &reader) else { return nil }
                changes.append(change)
            } while reader.skip(",")
            guard reader.skip("]") else { return nil }
        }
        guard reader.skip("}}") else { return nil }
        self = .cookies(changes: changes)
    }
}
