/// Cuts a cookie file that arrives in pieces into batches that parse on their own, so that an
/// import of any size holds one batch at a time (in the importer, on the wire and in keyjard):
/// whole lines of a cookies.txt, whole elements of a JSON array (each batch wrapped in brackets
/// again). Every batch says the number of its first line or element, so that problems keep the
/// numbers they have in the file.
///
/// ```swift
/// var batcher = CookieFileBatcher(kind: .lines, maximumItems: 10_000)
/// for chunk in chunks { for batch in batcher.feed(chunk) { send(batch.text, batch.firstLine) } }
/// for batch in try batcher.finish() { send(batch.text, batch.firstLine) }
/// ```
public struct CookieFileBatcher: Sendable {
    public enum Kind: Sendable {
        /// A cookies.txt: one item per line.
        case lines
        /// A JSON array: one item per element.
        case jsonArray
    }

    /// Text that parses on its own, and the number its first line or element has in the file.
    public struct Batch: Sendable, Hashable {
        public var text: String
        public var firstLine: Int
    }

    /// A JSON document that is not an array of values (the batcher does not judge the elements
    /// themselves: the parser reports those by number).
    public struct Malformed: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
    }

    public let kind: Kind
    public let maximumItems: Int
    /// Bytes of the item being read (a line, an element), not yet whole.
    private var pending: [UInt8] = []
    /// Whole items of the batch being filled.
    private var items: [[UInt8]] = []
    private var firstItem = 1
    private var itemsSeen = 0
    // JSON scanning state.
    private var depth = 0
    private var inString = false
    private var escaped = false
    private var sawOpening = false
    private var sawClosing = false
    private var malformed: String?

    public init(kind: Kind, maximumItems: Int = 10_000) {
        self.kind = kind
        self.maximumItems = max(1, maximumItems)
    }

    /// Takes the next piece of the file; returns the batches it completed.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Batch] {
        var batches: [Batch] = []
        for byte in bytes {
            switch kind {
            case .lines: takeLineByte(byte, into: &batches)
            case .jsonArray: takeJSONByte(byte, into: &batches)
            }
        }
        return batches
    }

    /// The end of the file: the last batch.
    /// - Throws: ``Malformed`` for a JSON document that is not a whole array.
    public mutating func finish() throws(Malformed) -> [Batch] {
        var batches: [Batch] = []
        switch kind {
        case .lines:
            if !pending.isEmpty { completeItem(into: &batches) }
        case .jsonArray:
            if let malformed { throw Malformed(description: malformed) }
            guard sawOpening, sawClosing else {
                throw Malformed(description: "not a JSON array of cookies: the document does not end its array")
            }
        }
        if !items.isEmpty { batches.append(batch()) }
        return batches
    }

    // MARK: Lines

    private mutating func takeLineByte(_ byte: UInt8, into batches: inout [Batch]) {
        pending.append(byte)
        if byte == UInt8(ascii: "\n") { completeItem(into: &batches) }
    }

    // MARK: JSON

    private mutating func takeJSONByte(_ byte: UInt8, into batches: inout [Batch]) {
        guard malformed == nil else { return }
        if inString {
            pending.append(byte)
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
            return
        }
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"):
            if depth > 1 { pending.append(byte) }
        case UInt8(ascii: "["), UInt8(ascii: "{"):
            if depth == 0 {
                guard byte == UInt8(ascii: "["), !sawOpening else { return fail("not a JSON array of cookies") }
                sawOpening = true
            } else {
                pending.append(byte)
            }
            depth += 1
        case UInt8(ascii: "]"), UInt8(ascii: "}"):
            depth -= 1
            if depth == 0 {
                guard byte == UInt8(ascii: "]") else { return fail("not a JSON array of cookies") }
                sawClosing = true
                if !pending.isEmpty { completeItem(into: &batches) }
            } else if depth < 0 {
                fail("not a JSON array of cookies: an unbalanced bracket")
            } else {
                pending.append(byte)
            }
        case UInt8(ascii: ","):
            if depth == 1 {
                guard !pending.isEmpty else { return fail("not a JSON array of cookies: an empty element") }
                completeItem(into: &batches)
            } else {
                pending.append(byte)
            }
        default:
            guard depth >= 1, !sawClosing else { return fail("not a JSON array of cookies: text outside the array") }
            if byte == UInt8(ascii: "\"") { inString = true }
            pending.append(byte)
        }
    }

    private mutating func fail(_ reason: String) { malformed = reason }

    // MARK: Batches

    private mutating func completeItem(into batches: inout [Batch]) {
        items.append(pending)
        pending.removeAll(keepingCapacity: true)
        itemsSeen += 1
        if items.count >= maximumItems { batches.append(batch()) }
    }

    private mutating func batch() -> Batch {
        var bytes: [UInt8] = []
        switch kind {
        case .lines:
            for item in items { bytes += item }
        case .jsonArray:
            bytes.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { bytes.append(UInt8(ascii: ",")) }
                bytes += item
            }
            bytes.append(UInt8(ascii: "]"))
        }
        let made = Batch(text: String(decoding: bytes, as: UTF8.self), firstLine: firstItem)
        firstItem = itemsSeen + 1
        items.removeAll(keepingCapacity: true)
        return made
    }
}
