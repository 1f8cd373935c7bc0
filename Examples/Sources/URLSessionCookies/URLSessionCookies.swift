// URLSession with the shared jar: Foundation's HTTPCookieStorage cannot be replaced on Linux.
// snippet: urlsession
import Foundation
import FoundationNetworking  // URLSession lives here on Linux
import Keyjar

@main
struct URLSessionCookiesExample {
    static func main() async throws {
        let cookies = try await SharedCookieStorage.connect()
        // Take cookies away from Foundation, which would otherwise keep a copy of its own (in
        // HTTPCookieStorage.shared) and send that: httpCookieStorage = nil, httpShouldSetCookies = false.
        let configuration = URLSessionConfiguration.default
        cookies.prepare(configuration)
        let session = URLSession(configuration: configuration)

        let url = URL(string: CommandLine.arguments.dropFirst().first ?? "https://example.com/")!
        var request = URLRequest(url: url)
        cookies.addCookies(to: &request)  // the shared jar's Cookie header
        let (_, response) = try await session.data(for: request)
        if let response = response as? HTTPURLResponse {
            print(try await cookies.storeCookies(from: response).map(\.description))  // every Set-Cookie line
        }
    }
}
// snippet end
