import Foundation
import FoundationNetworking
import Glibc
import KeyjarHTTPCache
import KeyjarLoader
import KeyjarResponseCache

/// A cached response served to the delegate: 1 KB from memory, 1 MB from disk,
/// against Foundation's `URLSession` + `URLCache` serving the same stored response in the same
/// run. Both caches are filled directly and asked with return-cache-data-don't-load, so the
/// network is never involved (a miss would fail, and is counted as an error). Then a 16 KB
/// disk hit (no memory tier), alone and while other processes store and evict on the same
/// cache directory, as every process of one application shares its cache.
func runCacheBenchmark() throws {
    if let directory = ProcessInfo.processInfo.environment[churnVariable] { churn(directory) }
    var template = Array("/tmp/kjcache-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw BenchmarkError("mkdtemp failed") }
    let directory = String(cString: made)
    defer { try? FileManager.default.removeItem(atPath: directory) }

    let small = Data(repeating: 0x61, count: 1_024)
    let large = Data(repeating: 0x62, count: 1 << 20)
    // Port 9 (discard): never contacted; a load that went to the network would fail.
    guard let smallURL = URL(string: "http://127.0.0.1:9/small"), let largeURL = URL(string: "http://127.0.0.1:9/large")
    else { throw BenchmarkError("bad URL") }

    // Keyjar: a memory cache for the 1 KB body, a disk cache whose memory tier is too small
    // for the 1 MB one (bodies over an eighth of it stay on disk only).
    let memoryCache = try ResponseCache(configuration: .init(memoryCapacity: 4 << 20))
    let diskCache = try ResponseCache(
        configuration: .init(memoryCapacity: 64 << 10, directory: URL(fileURLWithPath: directory + "/keyjar"))
    )
    func entry(_ url: URL) -> CachedEntry {
        let now = Date()
        return CachedEntry(
            url: url,
            response: StoredResponse(
                statusCode: 200,
                headers: HTTPHeaderFields([("Cache-Control", "max-age=3600"), ("Content-Type", "text/plain")]),
                requestTime: now,
                responseTime: now,
                requestHeaders: HTTPHeaderFields()
            )
        )
    }
    memoryCache.store(entry(smallURL), body: small)
    diskCache.store(entry(largeURL), body: large)

    let keyjarSmall = try timeKeyjar(
        URLLoader(configuration: .init(responseCache: memoryCache)),
        smallURL,
        1_024,
        5_000
    )
    let keyjarLarge = try timeKeyjar(URLLoader(configuration: .init(responseCache: diskCache)), largeURL, 1 << 20, 500)

    // Foundation: the same responses in URLCache (memory for 1 KB, disk for 1 MB).
    func cached(_ url: URL, _ data: Data) -> CachedURLResponse? {
        HTTPURLResponse(
            url: url,
            statusCode: 200,
            httpVersion: "HTTP/1.1",
            headerFields: ["Cache-Control": "max-age=3600", "Content-Type": "text/plain"]
        ).map { CachedURLResponse(response: $0, data: data, userInfo: nil, storagePolicy: .allowed) }
    }
    let foundationMemory = URLCache(memoryCapacity: 16 << 20, diskCapacity: 0, diskPath: nil)
    let foundationDisk = URLCache(memoryCapacity: 0, diskCapacity: 64 << 20, diskPath: directory + "/foundation")
    if let response = cached(smallURL, small) {
        foundationMemory.storeCachedResponse(response, for: URLRequest(url: smallURL))
    }
    if let response = cached(largeURL, large) {
        foundationDisk.storeCachedResponse(response, for: URLRequest(url: largeURL))
    }
    let foundationSmall = try timeFoundation(foundationMemory, smallURL, 1_024, 2_000)
    let foundationLarge = try timeFoundation(foundationDisk, largeURL, 1 << 20, 20)

    let (alone, contended) = try timeSharedDiskHits(directory + "/shared")

    report("cache_hit_1k_memory", samples: keyjarSmall)
    report("cache_hit_1m_disk", samples: keyjarLarge)
    report("foundation_cache_hit_1k_memory", samples: foundationSmall)
    report("foundation_cache_hit_1m_disk", samples: foundationLarge)
    for (name, keyjar, foundation) in [
        ("1k_memory", keyjarSmall, foundationSmall), ("1m_disk", keyjarLarge, foundationLarge),
    ] {
        let ratio = Double(percentile(foundation.sorted(), 0.5)) / Double(max(1, percentile(keyjar.sorted(), 0.5)))
        print("cache_hit_\(name)_foundation_to_keyjar_ratio: \(String(format: "%.1f", ratio))")
    }
    report("cache_hit_16k_disk_alone", samples: alone)
    report("cache_hit_16k_disk_\(churners)_writers", samples: contended)
    for (name, samples) in [("alone", alone), ("\(churners)_writers", contended)] {
        let median = Double(percentile(samples.sorted(), 0.5))
        print("cache_hits_per_second_16k_disk_\(name): \(Int(1e9 / max(1, median)))")
    }
}

/// How many other processes store and evict while one process's hits are timed.
private let churners = 3
/// Set in a churning child's environment: the cache directory it works on.
private let churnVariable = "KEYJAR_BENCH_CACHE_CHURN"

/// One process's disk hits on a shared cache directory, alone, then while `churners` other
/// processes (this program again, in churn mode) store 48 KB bodies on 48 URLs into a 2 MB
/// capacity, stores evicting. The timed process records its uses in the far future (its
/// configuration's clock), so that its entry is never the least recently used however long it
/// is descheduled: every timed lookup is a hit.
private func timeSharedDiskHits(_ directory: String) throws -> (alone: [UInt64], contended: [UInt64]) {
    guard let url = URL(string: "http://127.0.0.1:9/shared") else { throw BenchmarkError("bad URL") }
    let size = 16 << 10
    let cache = try ResponseCache(
        configuration: .init(
            memoryCapacity: 0,
            diskCapacity: 2 << 20,
            directory: URL(fileURLWithPath: directory),
            now: { .distantFuture }
        )
    )
    cache.store(cacheEntry(url), body: Data(repeating: 0x63, count: size))
    let loader = URLLoader(configuration: .init(responseCache: cache))
    let alone = try timeKeyjar(loader, url, size, 2_000)
    var children: [Process] = []
    defer {
        for child in children {
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
    }
    for _ in 0..<churners {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        child.arguments = ["cache"]
        child.environment = ProcessInfo.processInfo.environment.merging([churnVariable: directory]) { $1 }
        let output = Pipe()
        child.standardOutput = output
        try child.run()
        children.append(child)
        // Its first store done: it is churning.
        guard output.fileHandleForReading.readData(ofLength: 1).count == 1 else {
            throw BenchmarkError("a churning process did not start")
        }
    }
    let contended = try timeKeyjar(loader, url, size, 2_000)
    return (alone, contended)
}

/// A churning child: stores and evicts until its parent is gone (it is normally killed).
private func churn(_ directory: String) -> Never {
    guard
        let cache = try? ResponseCache(
            configuration: .init(memoryCapacity: 0, diskCapacity: 2 << 20, directory: URL(fileURLWithPath: directory))
        )
    else { exit(1) }
    let parent = getppid()
    let body = Data(repeating: 0x64, count: 48 << 10)
    var random = SystemRandomNumberGenerator()
    var announced = false
    while getppid() == parent {
        guard let url = URL(string: "http://127.0.0.1:9/churn/\(random.next() % 48)") else { exit(1) }
        cache.store(cacheEntry(url), body: body)
        if !announced {
            FileHandle.standardOutput.write(Data("r".utf8))
            announced = true
        }
    }
    exit(0)
}

private func cacheEntry(_ url: URL) -> CachedEntry {
    let now = Date()
    return CachedEntry(
        url: url,
        response: StoredResponse(
            statusCode: 200,
            headers: HTTPHeaderFields([("Cache-Control", "max-age=3600"), ("Content-Type", "text/plain")]),
            requestTime: now,
            responseTime: now,
            requestHeaders: HTTPHeaderFields()
        )
    )
}

/// Start of the load to the delegate's finish, the body counted.
private func timeKeyjar(_ loader: URLLoader, _ url: URL, _ size: Int, _ count: Int) throws -> [UInt64] {
    let delegate = WaitingDelegate()
    var samples: [UInt64] = []
    for index in 0..<(count + count / 10) {
        var request = URLRequest(url: url)
        request.cachePolicy = .returnCacheDataDontLoad
        let start = nanoseconds()
        _ = loader.connection(with: request, delegate: delegate)
        guard let (bytes, finishedAt) = delegate.waitForFinish(), bytes == size else {
            throw BenchmarkError("a Keyjar cache hit for \(url) failed")
        }
        if index >= count / 10 { samples.append(finishedAt - start) }
    }
    return samples
}

/// Start of the task to its completion handler, through URLSession.
private func timeFoundation(_ cache: URLCache, _ url: URL, _ size: Int, _ count: Int) throws -> [UInt64] {
    let configuration = URLSessionConfiguration.default
    configuration.urlCache = cache
    configuration.requestCachePolicy = .returnCacheDataDontLoad
    let session = URLSession(configuration: configuration)
    defer { session.invalidateAndCancel() }
    var samples: [UInt64] = []
    for index in 0..<(count + max(1, count / 10)) {
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox()
        let start = nanoseconds()
        let task = session.dataTask(with: URLRequest(url: url)) { data, _, _ in
            result.set(data?.count ?? -1, nanoseconds())
            done.signal()
        }
        task.resume()
        done.wait()
        guard let (bytes, finishedAt) = result.value, bytes == size else {
            throw BenchmarkError("a Foundation cache hit for \(url) failed (the URLCache did not answer)")
        }
        if index >= max(1, count / 10) { samples.append(finishedAt - start) }
    }
    return samples
}

private final class ResultBox: @unchecked Sendable {
    // @unchecked: written once by the completion handler before the semaphore is signalled.
    private(set) var value: (Int, UInt64)?
    func set(_ bytes: Int, _ time: UInt64) { value = (bytes, time) }
}
