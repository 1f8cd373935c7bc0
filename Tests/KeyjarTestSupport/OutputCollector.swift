public import Foundation

/// A child's output gathered as it comes, by a thread of its own that reads the pipe to its
/// end. Never Foundation's `readabilityHandler`: that is a dispatch source on the descriptor,
/// and one cancelled while the descriptor was being closed crashed the whole test runner in
/// libdispatch's event loop (`_dispatch_event_loop_drain`, a CI run of 21989a4).
public final class OutputCollector: Sendable {
    /// Give its write end to the child (standard output, error, or both).
    public let pipe = Pipe()
    private let state = LockedBox((text: "", ended: false))

    public init() {}

    /// Starts reading. Call once the child runs: ChildProcess has closed the runner's copy of
    /// the write end by then, so the reader sees the end when every writer is gone.
    public func start() {
        let reading = pipe.fileHandleForReading
        let state = state
        Thread.detachNewThread {
            while true {
                let data = DescriptorIO.read(reading, upTo: 64 << 10)
                if data.isEmpty { break }
                state.mutate { $0.text += String(decoding: data, as: UTF8.self) }
            }
            state.mutate { $0.ended = true }
        }
    }

    /// What has come so far.
    public var text: String { state.get().text }

    /// Whether every writer is gone and everything they wrote has been read.
    public var ended: Bool { state.get().ended }

    /// Everything, once the writers are gone.
    public func waitForEnd() async throws -> String {
        try await waitUntil("the end of a child's output") { ended }
        return text
    }
}
