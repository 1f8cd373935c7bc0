/// Header fields as they came: name and value pairs in order, names compared without regard
/// to case. Several lines of one field are kept apart; ``subscript(_:)`` joins them with ", "
/// as RFC 9110 §5.3 combines them.
public struct HTTPHeaderFields: Sendable, Hashable, Sequence {
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var fields: [Field]

    public init(_ fields: [Field] = []) { self.fields = fields }

    public init(_ pairs: [(String, String)]) { fields = pairs.map { Field(name: $0.0, value: $0.1) } }

    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// Every value of the field `name`, in order.
    public func values(_ name: String) -> [String] {
        fields.compactMap { Self.same($0.name, name) ? $0.value : nil }
    }

    /// The field's lines joined with ", "; nil when absent.
    public subscript(_ name: String) -> String? {
        let found = values(name)
        return found.isEmpty ? nil : found.joined(separator: ", ")
    }

    public func contains(_ name: String) -> Bool { fields.contains { Self.same($0.name, name) } }

    public mutating func append(_ name: String, _ value: String) { fields.append(Field(name: name, value: value)) }

    public mutating func remove(_ name: String) { fields.removeAll { Self.same($0.name, name) } }

    /// Replaces every line of `name` by `values`, where the first of them stood.
    public mutating func replace(_ name: String, with values: [String]) {
        // No line before the first one of `name` is removed: the position stays valid.
        let position = fields.firstIndex { Self.same($0.name, name) }
        remove(name)
        fields.insert(contentsOf: values.map { Field(name: name, value: $0) }, at: position ?? fields.endIndex)
    }

    /// The comma-separated members of every line of `name` (RFC 9110 §5.6.1), trimmed, empty
    /// members dropped; commas inside a quoted string do not separate.
    public func listMembers(_ name: String) -> [String] {
        values(name).flatMap(Self.splitList)
    }

    static func splitList(_ value: String) -> [String] {
        var members: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for character in value {
            if escaped {
                escaped = false
            } else if quoted, character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ",", !quoted {
                members.append(current)
                current = ""
                continue
            }
            current.append(character)
        }
        members.append(current)
        return members.map { $0.trimmingWhitespace }.filter { !$0.isEmpty }
    }

    static func same(_ a: String, _ b: String) -> Bool {
        a.utf8.count == b.utf8.count && a.lowercased() == b.lowercased()
    }
}

extension String {
    /// Without leading and trailing spaces and tabs (HTTP's OWS).
    var trimmingWhitespace: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
