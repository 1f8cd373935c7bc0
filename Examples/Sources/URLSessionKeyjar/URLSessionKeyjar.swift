// A URLSession program on the shared store: one line in its configuration, nothing else changed.
// snippet: urlsession-keyjar
import Foundation
import FoundationNetworking  // URLSession lives here on Linux
import KeyjarLoader

@main
struct URLSessionKeyjarExample {
    static func main() async throws {
        let configuration = URLSessionConfiguration.default
        configuration.useKeyjar()  // shared cookies and credentials, the response cache
        let session = URLSession(configuration: configuration)

        // From here on, URLSession as ever: completion handlers, delegates, async calls.
        let url = URL(string: CommandLine.arguments.dropFirst().first ?? "https://example.com/")!
        let (data, response) = try await session.data(for: URLRequest(url: url))
        print((response as? HTTPURLResponse)?.statusCode ?? 0, data.count)
    }
}
// snippet end
