// The shared cookie jar: store a response's cookies, send them, hear of every change.
// snippet: cookies
import Foundation
import FoundationNetworking  // URLRequest and URLSession live here on Linux
import Keyjar

@main
struct SharedCookiesExample {
    static func main() async throws {
        // Connects, and starts keyjard if none is serving (the synchronous `SharedCookieStorage()`
        // does the same while holding the calling thread).
        let cookies = try await SharedCookieStorage.connect()
        let url = URL(string: "https://www.example.com/login")!

        // A response's Set-Cookie lines, one by one, under the accept policy:
        let outcomes = try await cookies.storeCookies(
            fromResponseHeaders: ["sid=42; Secure; HttpOnly", "wide=1; Domain=com"],
            for: url,
            mainDocumentURL: nil
        )
        print(outcomes.map(\.description))  // ["stored", "rejected: Domain=com is a public suffix …"]

        // The Cookie header for a request, answered from this process's replica (no round trip):
        var request = URLRequest(url: url)
        request.setValue(cookies.cookieHeader(for: url), forHTTPHeaderField: "Cookie")

        // Every change made by any process, as Apple-named notifications with the storage as
        // object (an observer of NotificationCenter ported from Foundation hears them too), or as
        // typed events. The process is woken for other processes' changes only while it listens:
        let observation = cookies.addObserver(forName: KeyjarNotifications.cookiesChanged) { note in
            print("notified:", note.name.rawValue)
        }
        let changes = cookies.client.changes()  // listening from here on
        // Keyjar's own listener: called on the thread that applied each change, with nothing
        // posted or bridged for it (the cheapest way to hear other processes' changes).
        let listener = cookies.client.addListener { change in
            if case .event(let event) = change { print("heard:", event.sequence) }
        }

        try await cookies.storeCookies(fromResponseHeaders: ["theme=dark"], for: url, mainDocumentURL: nil)
        for await change in changes {
            print(change.sequence, change.event)
            break  // a watcher would keep looping; this program stops after the first change
        }
        observation.cancel()
        listener.cancel()
    }
}
// snippet end
