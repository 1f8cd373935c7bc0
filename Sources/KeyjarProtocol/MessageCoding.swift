public import Foundation

/// JSON encoding of messages into frame payloads, and decoding with a typed error.
public enum MessageCoding {
    /// Times travel as Unix seconds (with fractions), the form every other tool reads.
    public static func encoder() -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        return decoder
    }

    /// Encodes any message with Foundation's encoder (client and server messages have faster
    /// overloads in MessageCoding+FastPath.swift).
    public static func encode(_ message: some Encodable) -> [UInt8] { encode(codable: message) }

    /// The reference encoding, which the fast paths must match.
    public static func encode(codable message: some Encodable) -> [UInt8] {
        // Messages are plain values (strings, numbers, arrays); encoding them cannot fail.
        (try? Array(encoder().encode(message)))
            ?? Array(#"{"failure":{"error":{"code":3,"message":"unencodable"}}}"#.utf8)
    }

    /// Decodes a payload, or describes precisely why it is not a valid message.
    public static func decode<Message: Decodable>(
        _ type: Message.Type,
        from payload: some Sequence<UInt8>
    ) throws(WireError) -> Message {
        try decode(codable: type, from: payload)
    }

    /// The reference decoding, which the fast paths must match.
    public static func decode<Message: Decodable>(
        codable type: Message.Type,
        from payload: some Sequence<UInt8>
    ) throws(WireError) -> Message {
        // The copy may hold a password (a setCredential or password message in a form the fast
        // path leaves to Foundation): zeroed once decoded.
        var data = Data(payload)
        defer { data.resetBytes(in: 0..<data.count) }
        do {
            return try decoder().decode(type, from: data)
        } catch {
            throw WireError(code: WireError.malformedMessage, message: "malformed message: \(describe(error))")
        }
    }

    private static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .dataCorrupted(let context)?:
            return context.codingPath.isEmpty ? "not valid JSON" : "invalid value at \(path(context))"
        case .keyNotFound(let key, let context)?: return "missing '\(key.stringValue)' at \(path(context))"
        case .typeMismatch(_, let context)?, .valueNotFound(_, let context)?: return "wrong type at \(path(context))"
        default: return "undecodable"
        }
    }

    private static func path(_ context: DecodingError.Context) -> String {
        let path = context.codingPath.map(\.stringValue).joined(separator: ".")
        return path.isEmpty ? "top level" : path
    }
}
