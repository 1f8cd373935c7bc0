// A loader on the shared store with a response cache of the application's choosing.
// snippet: cache
import Foundation
import FoundationNetworking  // URLRequest lives here on Linux
import KeyjarLoader

@main
struct ResponseCacheChoiceExample {
    static func main() async throws {
        // 4 MB in memory, 50 MB on disk, https responses on disk too, in the application's place.
        let cache = ResponseCache.Configuration(
            memoryCapacity: 4 << 20,
            diskCapacity: 50 << 20,
            directory: ResponseCache.Configuration.defaultDirectory(application: "my-app"),
            storesSecureResponsesOnDisk: true
        )
        let loader: URLLoader
        do {
            loader = try URLLoader(sharedStore: .init(), cache: cache)
        } catch let error as ResponseCacheError {
            // The directory cannot be used (not writable, not a directory): say so, load uncached.
            print("no response cache: \(error)")
            loader = try URLLoader(sharedStore: .init(), cache: nil)
        }
        let url = URL(string: CommandLine.arguments.dropFirst().first ?? "https://example.com/")!
        var request = URLRequest(url: url)
        request.cachePolicy = .returnCacheDataElseLoad  // any stored response, else the network
        let (data, _) = try await loader.data(for: request)
        print(data.count)
    }
}
// snippet end
