/// Replaces every occurrence of some secrets in a stream of bytes with `***`, as the bytes pass
/// (`keyjar run --mask`: a command's standard output and error, which may echo the password or
/// token it was handed).
///
/// Every byte that belongs to an occurrence of a secret is masked, occurrences that overlap
/// included (secrets `abc` and `cdef` in `abcdef` leave nothing of either), and a run of masked
/// bytes becomes one `***`. A secret may arrive split across reads, so the end of a chunk that
/// could be the beginning of a secret is held back, with what it already knows of it, until the
/// next chunk says whether it is; nothing else is held. No I/O: the caller reads and writes.
package struct SecretMask: Sendable {
    package static let replacement: [UInt8] = Array("***".utf8)

    private let secrets: [[UInt8]]
    /// Bytes that may be the beginning of a secret, held until more arrive or the stream ends,
    /// and whether each is already known to be part of one.
    private var held: [UInt8] = []
    private var heldMasked: [Bool] = []
    /// Whether the last byte written was masked: a run split across writes is one `***`.
    private var inMaskedRun = false

    /// `secrets`: the values to mask; empty ones are ignored (they would match everywhere).
    package init(secrets: some Sequence<String>) {
        self.secrets = Set(secrets.filter { !$0.isEmpty }).map { Array($0.utf8) }
    }

    /// Whether there is anything to mask at all.
    package var isEmpty: Bool { secrets.isEmpty }

    /// The bytes to write now for `chunk`.
    package mutating func filter(_ chunk: some Collection<UInt8>) -> [UInt8] {
        let buffer = held + chunk
        var masked = heldMasked + [Bool](repeating: false, count: buffer.count - held.count)
        for start in buffer.indices {
            for secret in secrets where buffer[start...].starts(with: secret) {
                for index in start..<start + secret.count { masked[index] = true }
            }
        }
        // From the first byte whose rest could still grow into a secret, all is held.
        let safe =
            buffer.indices.first { start in
                let rest = buffer[start...]
                return secrets.contains { $0.count > rest.count && $0.starts(with: rest) }
            } ?? buffer.count
        held = Array(buffer[safe...])
        heldMasked = Array(masked[safe...])
        return emit(buffer[..<safe], masked[..<safe])
    }

    /// What was held at the end of the stream: no secret after all, but masked where a whole
    /// one covered it.
    package mutating func finish() -> [UInt8] {
        let output = emit(held[...], heldMasked[...])
        held = []
        heldMasked = []
        return output
    }

    private mutating func emit(_ bytes: ArraySlice<UInt8>, _ masked: ArraySlice<Bool>) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        for (byte, isMasked) in zip(bytes, masked) {
            if isMasked {
                if !inMaskedRun { output.append(contentsOf: Self.replacement) }
            } else {
                output.append(byte)
            }
            inMaskedRun = isMasked
        }
        return output
    }
}
