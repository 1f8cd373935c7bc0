import Foundation
import KeyjarTestSupport
import Testing

/// `keyjar fetch --cache` run as a user runs it: one process per fetch, many at once, all of
/// them on the one cache of the application keyjar.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct FetchCacheProcessesTests {
    /// `/item/N`: cacheable for ten minutes, its body counting the fetches of that path;
    /// `/total`: how many items were fetched in all.
    static let server = """
        import http.server, threading
        counts = {}
        lock = threading.Lock()
        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def do_GET(self):
                with lock:
                    if self.path == "/total":
                        body, headers = str(sum(counts.values())).encode(), []
                    else:
                        counts[self.path] = counts.get(self.path, 0) + 1
                        body = ("%s fetch %d" % (self.path, counts[self.path])).encode()
                        headers = [("Cache-Control", "max-age=600")]
                self.send_response(200)
                for key, value in headers: self.send_header(key, value)
                self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
            def log_message(self, *args): pass
        http.server.ThreadingHTTPServer.daemon_threads = True
        s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        print(s.server_address[1], flush=True)
        s.serve_forever()
        """

    /// The scenario: 20 URLs fetched at once by 20 processes, then each again one after
    /// another: all 20 come from the cache. (Opening the cache used to delete the bodies other
    /// processes were writing or had not indexed yet.)
    @Test func twentyProcessesAtOnceThenEachAgainAllFromTheCache() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        let server = try await LocalHTTPServer(script: Self.server)
        let cacheHome = try TemporaryDirectory()
        let environment = ["XDG_CACHE_HOME": cacheHome.path]
        let urls = (0..<20).map { "\(server.base)/item/\($0)" }

        let first = try await withThrowingTaskGroup(of: (String, KeyjarCLI.Result).self) { group in
            for url in urls {
                group.addTask {
                    (url, try await keyjar.run(["fetch", "-s", "--cache", url], environment: environment))
                }
            }
            return try await group.reduce(into: [String: KeyjarCLI.Result]()) { $0[$1.0] = $1.1 }
        }
        for url in urls {
            let result = try #require(first[url])
            #expect(result.status == 0 && result.output.hasSuffix(" fetch 1"), "\(url): \(result.error)")
        }
        // Without --cache: asked every time.
        let total = { try await keyjar.run(["fetch", "-s", "\(server.base)/total"]).output }
        #expect(try await total() == "20")

        var hits = 0
        for url in urls {
            let again = try await keyjar.run(["fetch", "-s", "--cache", url], environment: environment)
            #expect(again.status == 0, "\(again.error)")
            if again.output.hasSuffix(" fetch 1") { hits += 1 }
        }
        #expect(hits == 20)
        #expect(try await total() == "20")
        let listed = try await keyjar.run(["cache", "list"], environment: environment)
        #expect(listed.lines.count == 20, "\(listed.output)")
    }
}
