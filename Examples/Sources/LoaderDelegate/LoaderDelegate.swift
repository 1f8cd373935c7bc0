// The delegate contract: every step of a load, on the queue of your choice.
// snippet: delegate
import Foundation
import FoundationNetworking  // URLRequest, URLResponse and URLCredential live here on Linux
import KeyjarLoader

/// Hears of a load on the main queue, which is the main actor's: the messages are nonisolated
/// (the protocol's), and `MainActor.assumeIsolated` reaches the actor's state, checking that
/// they do come on the main queue.
@MainActor
final class Printer: LoaderConnectionAuthenticationDelegate {
    private var received = 0
    private var connection: LoaderConnection?
    private var finished: CheckedContinuation<Int, any Error>?

    /// Loads `request` and returns how many bytes the final response had.
    func load(_ request: URLRequest, with loader: URLLoader) async throws -> Int {
        try await withCheckedThrowingContinuation { continuation in
            finished = continuation
            // Starts at once; the connection lives until it finishes or fails.
            connection = loader.connection(with: request, delegate: self, delegateQueue: .main)
        }
    }

    nonisolated func connection(_ connection: LoaderConnection, didReceive response: URLResponse) {
        MainActor.assumeIsolated { received = 0 }  // a new response: what came before is void
    }

    nonisolated func connection(_ connection: LoaderConnection, didReceive data: Data) {
        MainActor.assumeIsolated { received += data.count }  // bytes as they arrive
    }

    nonisolated func connection(
        _ connection: LoaderConnection,
        willSendRequestFor challenge: URLAuthenticationChallenge
    ) {
        // Stored credentials were tried first; a program would ask its user here.
        challenge.sender?.performDefaultHandling(for: challenge)
    }

    nonisolated func connectionDidFinishLoading(_ connection: LoaderConnection) {
        MainActor.assumeIsolated { end(.success(received)) }
    }

    nonisolated func connection(_ connection: LoaderConnection, didFailWithError error: any Error) {
        MainActor.assumeIsolated { end(.failure(error)) }
    }

    private func end(_ result: Result<Int, any Error>) {
        finished?.resume(with: result)
        finished = nil
        connection = nil
    }
}

@main
struct LoaderDelegateExample {
    static func main() async throws {
        let loader = try await URLLoader.shared()
        let url = URL(string: CommandLine.arguments.dropFirst().first ?? "https://example.com/")!
        print("received", try await Printer().load(URLRequest(url: url), with: loader), "bytes")
    }
}
// snippet end
