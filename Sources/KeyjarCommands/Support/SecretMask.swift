/// Replaces every occurrence of some secrets in a stream of bytes with `***`, as the bytes pass
/// (`keyjar run --mask`: a command's standard output and error, which may echo the password or
/// token it was handed).
///
/// A secret may arrive split across reads, so the end of a chunk that could be the beginning
/// of a secret is held back until the next chunk says whether it is; nothing else is held. A
/// secret that begins another, longer one is held too until the longer one is ruled out, so
/// that masking the shorter never lets the rest of the longer one out. No I/O: the caller reads
/// and writes.
package struct SecretMask: Sendable {
    package static let replacement: [UInt8] = Array("***".utf8)

    /// The secrets as bytes, longest first (the longest match wins where two start together).
    private let secrets: [[UInt8]]
    /// Bytes that may be the beginning of a secret, held until more arrive or the stream ends.
    private var held: [UInt8] = []

    /// `secrets`: the values to mask; empty ones are ignored (they would match everywhere).
    package init(secrets: some Sequence<String>) {
        self.secrets = Set(secrets.filter { !$0.isEmpty }).map { Array($0.utf8) }.sorted { $0.count > $1.count }
    }

    /// Whether there is anything to mask at all.
    package var isEmpty: Bool { secrets.isEmpty }

    /// The bytes to write now for `chunk`.
    package mutating func filter(_ chunk: some Collection<UInt8>) -> [UInt8] {
        var buffer = held
        buffer.append(contentsOf: chunk)
        held = []
        var output: [UInt8] = []
        output.reserveCapacity(buffer.count)
        var index = 0
        while index < buffer.count {
            let rest = buffer[index...]
            if secrets.contains(where: { $0.count > rest.count && $0.starts(with: rest) }) {
                held = Array(rest)
                break
            }
            if let secret = secrets.first(where: { rest.starts(with: $0) }) {
                output.append(contentsOf: Self.replacement)
                index += secret.count
            } else {
                output.append(buffer[index])
                index += 1
            }
        }
        return output
    }

    /// What was held at the end of the stream: it began no secret after all, but may still hold
    /// a shorter one whole.
    package mutating func finish() -> [UInt8] {
        let rest = held
        held = []
        var output: [UInt8] = []
        var index = 0
        while index < rest.count {
            if let secret = secrets.first(where: { rest[index...].starts(with: $0) }) {
                output.append(contentsOf: Self.replacement)
                index += secret.count
            } else {
                output.append(rest[index])
                index += 1
            }
        }
        return output
    }
}
