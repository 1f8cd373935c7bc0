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
//   KeyjarTestPeer reuse <url>              load <url> twice in a row with an ephemeral loader, on
//                                           this process's own libcurl engine; print each body
//   KeyjarTestPeer shared-loader            whether URLLoader.shared() (sync, async, from another
//                                           thread) is one loader with one client and one cache
//   KeyjarTestPeer cache-write <dir> <url>  store "first" for <url> in the response cache at <dir>,
//                                           print "stored", then write a second body slowly,
//                                           printing "writing", until killed
//   KeyjarTestPeer cache-stress <dir> <seed> <operations>
//                                           store, read, revalidate and (by a small capacity)
//                                           evict self-checking bodies in the cache at <dir>;
//                                           prints "started", then one line per operation; a
//                                           body that is not whole or not its entry's: "BAD …"
//                                           and exit 3; else "done" and exit 0
//   KeyjarTestPeer load <url>               load <url> with URLLoader.shared() (the shared store's
//                                           cookies and credentials, as any KeyjarLoader program),
//                                           print the body; status 1 and the error otherwise
//   KeyjarTestPeer new-session-keyring COMMAND ARGUMENT…
//                                           join a new, empty session keyring, as a login does,
//                                           then execute COMMAND: another login session's process
import Foundation
import FoundationNetworking
import Keyjar
import KeyjarCore
import KeyjarHTTPCache
import KeyjarLoader
import KeyjarPlatform
import KeyjarResponseCache

let arguments = Array(CommandLine.arguments.dropFirst())

if arguments.first == "new-session-keyring", arguments.count >= 2 {
    do {
        try SessionKeyring.joinNewSession()
    } catch {
        try? FileHandle.standardError.write(contentsOf: Data("KeyjarTestPeer: \(error)\n".utf8))
        exit(1)
    }
    let command = Array(arguments.dropFirst())
    var argv = command.map { strdup($0) } + [nil]
    execv(command[0], &argv)
    try? FileHandle.standardError.write(contentsOf: Data("KeyjarTestPeer: cannot execute \(command[0])\n".utf8))
    exit(127)
}

/// This process's threads, from the kernel.
func threadCount() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
}

if arguments.first == "reuse", arguments.count == 2, let url = URL(string: arguments[1]) {
    do {
        let loader = URLLoader(configuration: .init(cookieStorage: .ephemeral()))
        for _ in 0..<2 {
            let (data, _) = try loader.sendSynchronousRequest(URLRequest(url: url))
            print(String(decoding: data, as: UTF8.self))
        }
        exit(0)
    } catch {
        try? FileHandle.standardError.write(contentsOf: Data("KeyjarTestPeer: \(error)\n".utf8))
        exit(1)
    }
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

if arguments.count == 2, arguments[0] == "load", let url = URL(string: arguments[1]) {
    do {
        let (body, _) = try await URLLoader.shared().data(for: URLRequest(url: url))
        FileHandle.standardOutput.write(body)
        exit(0)
    } catch {
        try? FileHandle.standardError.write(contentsOf: Data("KeyjarTestPeer: \(error)\n".utf8))
        exit(1)
    }
}

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
        try FileHandle.standardOutput.write(contentsOf: Data("stored\n".utf8))
        let writer = cache.makeWriter(for: entry())
        // Until killed, or until the test that reads this is gone (the write fails: EPIPE).
        while true {
            writer.append(Data(repeating: UInt8(ascii: "x"), count: 64 << 10))
            try FileHandle.standardOutput.write(contentsOf: Data("writing\n".utf8))
            usleep(20_000)
        }
    } catch {
        try? FileHandle.standardError.write(contentsOf: Data("KeyjarTestPeer: \(error)\n".utf8))
        exit(1)
    }
}

/// The stress mode's bodies: `length` bytes from `seed`, so that a reader can tell a whole
/// body of its entry (whose X-Body-Seed and X-Body-Length name them) from a truncated or mixed one.
func stressBody(seed: UInt64, length: Int) -> Data {
    Data((0..<length).map { UInt8(truncatingIfNeeded: ((seed &+ UInt64($0)) &* 0x9E37_79B9_7F4A_7C15) >> 56) })
}

if arguments.first == "cache-stress", arguments.count == 4, let seed = UInt64(arguments[2]),
    let operations = Int(arguments[3])
{
    do {
        // No memory tier (capacity 0): every read is of another process's files; 256 KiB on
        // disk against bodies up to 32 KiB on 8 URLs (half of them with two variants): stores evict.
        let cache = try ResponseCache(
            configuration: .init(
                memoryCapacity: 0,
                diskCapacity: 256 << 10,
                directory: URL(fileURLWithPath: arguments[1]),
                storesSecureResponsesOnDisk: true
            )
        )
        var state = seed
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        func say(_ line: String) { try? FileHandle.standardOutput.write(contentsOf: Data((line + "\n").utf8)) }
        /// A body read must be whole and its entry's; a problem found is reported and ends the run.
        func check(_ entry: CachedEntry, _ body: CachedBody, asked language: String?) {
            let data = (try? body.load()) ?? Data()
            let headers = entry.response.headers
            guard let bodySeed = headers["X-Body-Seed"].flatMap(UInt64.init),
                let length = headers["X-Body-Length"].flatMap(Int.init)
            else { fail("no X-Body fields in \(headers)") }
            if data.count != length || entry.bodySize != length || data != stressBody(seed: bodySeed, length: length) {
                fail("\(entry.url) body of \(data.count) bytes, entry says \(entry.bodySize), fields \(length)")
            }
            if let language, headers["Content-Language"] != language {
                fail("\(entry.url) asked \(language), got \(headers["Content-Language"] ?? "none")")
            }
        }
        func fail(_ problem: String) -> Never {
            say("BAD " + problem)
            exit(3)
        }
        say("started")
        for operation in 0..<operations {
            let item = Int(next() % 8)
            let language: String? = item < 4 ? (next() % 2 == 0 ? "en" : "fr") : nil
            guard let url = URL(string: "http://stress.test/item/\(item)") else { fail("bad URL") }
            let request = HTTPHeaderFields(language.map { [("Accept-Language", $0)] } ?? [])
            switch next() % 10 {
            case 0..<4:
                let bodySeed = next()
                let length = 1 + Int(next() % 32_768)
                var fields = [
                    ("Cache-Control", "max-age=600"), ("ETag", "\"\(bodySeed)\""), ("X-Body-Seed", String(bodySeed)),
                    ("X-Body-Length", String(length)),
                ]
                if let language { fields += [("Vary", "Accept-Language"), ("Content-Language", language)] }
                let now = Date()
                let entry = CachedEntry(
                    url: url,
                    response: StoredResponse(
                        statusCode: 200,
                        headers: HTTPHeaderFields(fields),
                        requestTime: now,
                        responseTime: now,
                        requestHeaders: request
                    )
                )
                // Written in pieces, as a load does.
                let writer = cache.makeWriter(for: entry)
                let body = stressBody(seed: bodySeed, length: length)
                var offset = 0
                while offset < length {
                    let end = min(length, offset + 4_096)
                    writer.append(body[offset..<end])
                    offset = end
                }
                writer.finish()
                say("\(operation) stored \(url.lastPathComponent) \(language ?? "-")")
            case 4..<8:
                if let hit = cache.lookup(url, requestHeaders: request) { check(hit.entry, hit.body, asked: language) }
                say("\(operation) read \(url.lastPathComponent)")
            default:
                // A revalidation: a 304's fields freshen the variant; its body stays.
                if let hit = cache.lookup(url, requestHeaders: request) {
                    check(hit.entry, hit.body, asked: language)
                    let now = Date()
                    cache.update(
                        hit.entry,
                        response: HTTPCacheRules.updated(
                            hit.entry.response,
                            notModified: HTTPHeaderFields([("X-Validated", String(operation))]),
                            requestTime: now,
                            responseTime: now
                        )
                    )
                }
                say("\(operation) revalidated \(url.lastPathComponent)")
            }
        }
        say("done")
        exit(0)
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
