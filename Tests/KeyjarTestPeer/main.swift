// A second process for the client-library tests: uses the Keyjar library as any program would.
//   KeyjarTestPeer set <url> <set-cookie>   store a response's cookie, print "stored"
//   KeyjarTestPeer header <url>             print the Cookie header from the replica
//   KeyjarTestPeer watch                    print "watching", then the names in the first cookie change
//   KeyjarTestPeer credential-users HOST PORT SCHEME REALM
//                                           the users SharedCredentialStorage has for that Basic space
//   KeyjarTestPeer threads <url>            a one-shot client, a replica client, then the replica
//                                           listening: how many threads each added, the header read
//   KeyjarTestPeer lookups <url> [listen]   print "ready"; then for each line read, the Cookie
//                                           header for <url> from the replica (listening if asked)
//   KeyjarTestPeer shared-loader            whether URLLoader.shared() (sync, async, from another
//                                           thread) is one loader with one client and one cache
//   KeyjarTestPeer cache-write <dir> <url>  store "first" for <url> in the response cache at <dir>,
//                                           print "stored", then write a second body slowly,
//                                           printing "writing", until killed
import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarHTTPCache
import KeyjarLoader
import KeyjarResponseCache

let arguments = Array(CommandLine.arguments.dropFirst())

/// This process's threads, from the kernel.
func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
}

if arguments.first == "threads", arguments.count == 2, let url = URL(string: arguments[1]) {
    do {
        let before = threadCount()
        let oneShot = try KeyjarClient(configuration: .init(keepsReplica: false))
        let oneShotHeader = try oneShot.cookieHeader(for: url) ?? ""
        let afterOneShot = threadCount()
        let replica = try KeyjarClient()
        let replicaHeader = SharedCookieStorage(client: replica).cookieHeader(for: url) ?? ""
        let afterReplica = threadCount()
        replica.startPostingNotifications()
        let afterListening = threadCount()
        print("one-shot \(afterOneShot - before) \(oneShotHeader) sequence \(oneShot.sequence)")
        print("replica \(afterReplica - afterOneShot) \(replicaHeader) sequence \(replica.sequence)")
        print("listening \(afterListening - afterReplica) \(replica.isListening)")
        exit(0)
    } catch {
        try? FileHandle.standardError.write(contentsOf: Data("KeyjarTestPeer: \(error)\n".utf8))
        exit(1)
    }
}

/// `URLLoader.shared()` as synchronous code gets it, and as asynchronous code does (overloading
/// picks the async one there).
func sharedFromSynchronousCode() throws -> URLLoader { try URLLoader.shared() }
func sharedFromAsynchronousCode() async throws -> URLLoader { try await URLLoader.shared() }

if arguments == ["shared-loader"] {
    do {
        let first = try sharedFromSynchronousCode()
        let fromAsync = try await sharedFromAsynchronousCode()
        let fromThread = try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try sharedFromSynchronousCode() }) }
        }
        let loaders = [first, fromAsync, fromThread]
        let clients = loaders.map { $0.configuration.cookieStorage?.sharedClient }
        let caches = loaders.map { $0.configuration.responseCache }
        print(loaders.allSatisfy { $0 === first } ? "same loader" : "different loaders", terminator: ", ")
        print(
            clients.allSatisfy { $0 != nil && $0 === clients[0] } ? "same client" : "different clients",
            terminator: ", "
        )
        print(caches.allSatisfy { $0 != nil && $0 === caches[0] } ? "same cache" : "different caches")
        exit(0)
    } catch {
        try? FileHandle.standardError.write(contentsOf: Data("KeyjarTestPeer: \(error)\n".utf8))
        exit(1)
    }
}

if arguments.first == "cache-write", arguments.count == 3, let url = URL(string: arguments[2]) {
    do {
        let cache = try ResponseCache(
            configuration: .init(directory: URL(fileURLWithPath: arguments[1]), storesSecureResponsesOnDisk: true)
        )
        func entry() -> CachedEntry {
            let now = Date()
            return CachedEntry(
                url: url,
                response: StoredResponse(
                    statusCode: 200,
                    headers: HTTPHeaderFields([("Cache-Control", "max-age=600")]),
                    requestTime: now,
                    responseTime: now,
                    requestHeaders: HTTPHeaderFields()
                )
            )
        }
        cache.store(entry(), body: Data("first".utf8))
        FileHandle.standardOutput.write(Data("stored\n".utf8))
        let writer = cache.makeWriter(for: entry())
        while true {
            writer.append(Data(repeating: UInt8(ascii: "x"), count: 64 << 10))
            FileHandle.standardOutput.write(Data("writing\n".utf8))
            usleep(20_000)
        }
    } catch {
        try? FileHandle.standardError.write(contentsOf: Data("KeyjarTestPeer: \(error)\n".utf8))
        exit(1)
    }
}

do {
    let storage = try SharedCookieStorage()
    switch arguments.first {
    case "set" where arguments.count == 3:
        guard let url = URL(string: arguments[1]) else { throw KeyjarClientError(code: .refused, message: "bad URL") }
        let outcomes = try storage.storeCookies(fromResponseHeaders: [arguments[2]], for: url, mainDocumentURL: nil)
        if case .rejected(let reason)? = outcomes.first { print(reason) } else { print("stored") }
    case "lookups" where arguments.count == 2 || (arguments.count == 3 && arguments[2] == "listen"):
        guard let url = URL(string: arguments[1]) else { throw KeyjarClientError(code: .refused, message: "bad URL") }
        if arguments.count == 3 { storage.client.startPostingNotifications() }
        // Unbuffered: the test reads each answer before it sends the next line.
        try? FileHandle.standardOutput.write(contentsOf: Data("ready\n".utf8))
        while readLine() != nil {
            try? FileHandle.standardOutput.write(contentsOf: Data(((storage.cookieHeader(for: url) ?? "") + "\n").utf8))
        }
    case "header" where arguments.count == 2:
        guard let url = URL(string: arguments[1]) else { throw KeyjarClientError(code: .refused, message: "bad URL") }
        print(storage.cookieHeader(for: url) ?? "")
    case "watch":
        let changes = storage.client.changes()
        // Unbuffered, so the test sees it before the first change arrives.
        try? FileHandle.standardOutput.write(contentsOf: Data("watching\n".utf8))
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            for await event in changes {
                if case .cookies(let cookieChanges) = event.event {
                    FileHandle.standardOutput.write(
                        Data((cookieChanges.map(\.cookie.name).joined(separator: ",") + "\n").utf8)
                    )
                    break
                }
            }
            done.signal()
        }
        // No limit of its own: the test waits for the line with its own deadline, then kills it.
        done.wait()
    case "credential-users" where arguments.count == 5:
        let credentials = SharedCredentialStorage(client: storage.client)
        let space = URLProtectionSpace(
            host: arguments[1],
            port: Int(arguments[2]) ?? 0,
            protocol: arguments[3],
            realm: arguments[4],
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
        for user in (credentials.credentials(for: space) ?? [:]).keys.sorted() { print(user) }
    default:
        FileHandle.standardError.write(
            Data("usage: KeyjarTestPeer set <url> <set-cookie> | header <url> | watch\n".utf8)
        )
        exit(2)
    }
} catch {
    try? FileHandle.standardError.write(contentsOf: Data("KeyjarTestPeer: \(error)\n".utf8))
    exit(1)
}
