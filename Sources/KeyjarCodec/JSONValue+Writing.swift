// Writing a JSON tree: for the formats that are built as a value rather than streamed member
// by member (the command's `--json`, the response cache's metadata, the secrets file, a
// download's resume data). Streamed formats (the wire, cookie files) call JSONWriter directly.

extension JSONValue {
    /// An integer, exactly.
    public static func integer(_ value: some BinaryInteger) -> JSONValue { .number(Substring(String(value))) }

    /// A number; integral values are written without a fraction (`3`, not `3.0`), and a
    /// non-finite one (which Keyjar never keeps) as 0.
    public static func number(of value: Double) -> JSONValue {
        guard value.isFinite else { return .number("0") }
        if value == value.rounded(), abs(value) < 0x1p53 { return .integer(Int64(value)) }
        return .number(Substring(value.description))
    }

    /// A string, or null when absent.
    public static func string(orNull value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }

    /// An object from members whose value may be absent: an absent one is left out (as Swift's
    /// JSONEncoder left out a nil optional).
    public static func object(omittingAbsent members: KeyValuePairs<String, JSONValue?>) -> JSONValue {
        .object(members.compactMap { key, value in value.map { (key: key, value: $0) } })
    }

    /// This value's text: compact with members in their order, or ``JSONWriter/Layout/readable``.
    package func encoded(_ layout: JSONWriter.Layout = .compact) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(value: self, layout: layout)
        return writer.bytes
    }
}

extension JSONWriter {
    /// How a tree is laid out.
    package enum Layout: Sendable {
        /// No whitespace, members in their order: what programs read.
        case compact
        /// For people and diffs (the command's `--json`): two spaces per level, `"key" : value`,
        /// members sorted by key, so that the same content always reads the same.
        case readable
    }

    package mutating func write(value: JSONValue, layout: Layout = .compact) {
        write(value, layout: layout, depth: 0)
    }

    private mutating func write(_ value: JSONValue, layout: Layout, depth: Int) {
        switch value {
        case .null: raw("null")
        case .bool(let bool): write(bool: bool)
        case .number(let text): bytes.append(contentsOf: text.utf8)
        case .string(let string): write(string: string)
        case .array(let elements):
            writeContainer(elements, open: UInt8(ascii: "["), close: UInt8(ascii: "]"), layout: layout, depth: depth) {
                writer,
                element in writer.write(element, layout: layout, depth: depth + 1)
            }
        case .object(var members):
            if layout == .readable { members.sort { $0.key < $1.key } }
            writeContainer(members, open: UInt8(ascii: "{"), close: UInt8(ascii: "}"), layout: layout, depth: depth) {
                writer,
                member in
                writer.write(string: member.key)
                if layout == .readable { writer.raw(" : ") } else { writer.raw(":") }
                writer.write(member.value, layout: layout, depth: depth + 1)
            }
        }
    }

    private mutating func writeContainer<Element>(
        _ elements: [Element],
        open: UInt8,
        close: UInt8,
        layout: Layout,
        depth: Int,
        writeElement: (inout JSONWriter, Element) -> Void
    ) {
        bytes.append(open)
        for (index, element) in elements.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            if layout == .readable { newline(depth: depth + 1) }
            writeElement(&self, element)
        }
        if layout == .readable, !elements.isEmpty { newline(depth: depth) }
        bytes.append(close)
    }

    private mutating func newline(depth: Int) {
        bytes.append(UInt8(ascii: "\n"))
        bytes.append(contentsOf: repeatElement(UInt8(ascii: " "), count: 2 * depth))
    }
}
