// Load a URL with the user's shared cookies and credentials.
// snippet: load
import Foundation
import FoundationNetworking  // URLRequest and URLResponse live here on Linux
import KeyjarLoader

@main
struct LoadURLExample {
    static func main() async throws {
        // The process's one loader on the shared store: keyjard's cookies and credentials (keyjard is
        // started if none is serving) and the application's response cache.
        let loader = try await URLLoader.shared()
        let url = URL(string: CommandLine.arguments.dropFirst().first ?? "https://example.com/")!
        let (data, response) = try await loader.data(for: URLRequest(url: url))
        print((response as? HTTPURLResponse)?.statusCode ?? 0, data.count)
    }
}
// snippet end
