import Foundation
import KeyjarCore

/// The cookie engine alone: a jar of 10,000 cookies over 500 sites (20 each), and libsoup's jar
/// with the same cookies as the peer for the Cookie header (scripts/cookie-header-libsoup.c).
func runEngineBenchmark() {
    let siteCount = 500
    let cookiesPerSite = 20
    let now = Date()

    /// Each site gets a realistic mix: domain cookies at /, deeper paths, host-only, Secure,
    /// HttpOnly, persistent and session, values of typical tracker/session length.
    func populate(_ jar: inout CookieJar) {
        for site in 0..<siteCount {
            let context = CookieContext(
                url: CookieURL(scheme: "https", host: "www.site\(site).com", path: "/some/path")
            )
            for index in 0..<cookiesPerSite {
                var header = "c\(index)=v\(site)x\(index)_3f9a1c0e7b2d4f6a"
                switch index % 4 {
                case 0: header += "; Domain=site\(site).com; Path=/"
                case 1: header += "; Path=/some; Secure; HttpOnly"
                case 2: header += "; Domain=site\(site).com; Path=/other; Max-Age=86400"
                default: header += "; Path=/; Max-Age=3600; SameSite=Lax"
                }
                if case .failure(let rejection) = jar.setCookie(header, context: context, now: now) {
                    fatalError("benchmark setup rejected \(header): \(rejection)")
                }
            }
        }
    }

    let limits = CookieJar.Limits(total: 100_000)

    // Memory: heap growth for building the 10,000-cookie jar.
    let heapBefore = heapBytesInUse()
    var jar = CookieJar(limits: limits)
    populate(&jar)
    let heapAfter = heapBytesInUse()
    precondition(
        jar.count == siteCount * cookiesPerSite,
        "expected \(siteCount * cookiesPerSite) cookies, have \(jar.count)"
    )
    print("jar_cookies: \(jar.count) cookies")
    print("jar_memory: \(String(format: "%.2f", Double(heapAfter - heapBefore) / 1_048_576)) MB")

    // Cookie header for https://www.siteN.com/some/path, from a parsed request context.
    let contexts = (0..<siteCount).map {
        CookieContext(url: CookieURL(scheme: "https", host: "www.site\($0).com", path: "/some/path"))
    }
    let urls = (0..<siteCount).compactMap { URL(string: "https://www.site\($0).com/some/path") }
    precondition(urls.count == siteCount, "benchmark URLs must parse")
    var samples: [UInt64] = []
    let lookups = 200_000
    samples.reserveCapacity(lookups)
    let heapBeforeLookups = heapBytesInUse()
    var headerBytes = 0
    for iteration in 0..<lookups {
        let context = contexts[(iteration &* 7919) % siteCount]
        let start = nanoseconds()
        let header = jar.cookieHeader(for: context, now: now)
        samples.append(nanoseconds() - start)
        headerBytes &+= header?.utf8.count ?? 0
    }
    report("cookie_header", samples: samples)

    // The same, starting from a Foundation URL (what a loader holds).
    samples.removeAll(keepingCapacity: true)
    for iteration in 0..<lookups {
        let url = urls[(iteration &* 7919) % siteCount]
        let start = nanoseconds()
        let header = CookieContext(url: url).flatMap { jar.cookieHeader(for: $0, now: now) }
        samples.append(nanoseconds() - start)
        headerBytes &+= header?.utf8.count ?? 0
    }
    report("cookie_header_from_url", samples: samples)
    let fromURLMedian = percentile(samples.sorted(), 0.5)
    // The peer in the same run: libsoup's jar, the same cookies and URLs.
    do {
        let peer = try runLibsoupPeer()
        print("libsoup_cookie_header_median: \(peer.median) ns")
        print("libsoup_header_bytes_per_lookup: \(peer.bytesPerLookup)")
        print(
            "cookie_header_from_url_over_libsoup: \(String(format: "%.3f", Double(fromURLMedian) / Double(peer.median)))"
        )
    } catch {
        print("libsoup peer: skipped (\(error))")
    }
    // Each looked-up site's lookup index (CookieBucket), built by the lookups above.
    let indexBytes = heapBytesInUse() - heapBeforeLookups
    print("jar_lookup_index_memory: \(String(format: "%.2f", Double(indexBytes) / 1_048_576)) MB")
    print("header_bytes_per_lookup: \(headerBytes / (2 * lookups))")

    // Insert: parse and store one new Set-Cookie into the 10,000-cookie jar.
    let inserts = 50_000
    samples.removeAll(keepingCapacity: true)
    let headers = (0..<inserts).map { "n\($0)=value\($0)_5e8b2a; Path=/; Max-Age=3600; Secure; SameSite=Lax" }
    for iteration in 0..<inserts {
        let context = contexts[iteration % siteCount]
        let start = nanoseconds()
        let result = jar.setCookie(headers[iteration], context: context, now: now)
        samples.append(nanoseconds() - start)
        if case .failure(let rejection) = result { fatalError("insert rejected: \(rejection)") }
    }
    report("set_cookie_insert", samples: samples)

    // Replace: the same cookie identity set again (the common case for session refreshes).
    samples.removeAll(keepingCapacity: true)
    for iteration in 0..<inserts {
        let context = contexts[iteration % siteCount]
        let start = nanoseconds()
        let result = jar.setCookie(headers[iteration], context: context, now: now)
        samples.append(nanoseconds() - start)
        if case .failure(let rejection) = result { fatalError("replace rejected: \(rejection)") }
    }
    report("set_cookie_replace", samples: samples)
    if headerBytes == 0 { print("warning: no header bytes produced") }
}

/// Compiles and runs `scripts/cookie-header-libsoup.c` (needs libsoup-3.0-dev, which
/// scripts/install-dependencies installs).
private func runLibsoupPeer() throws -> (median: Int, bytesPerLookup: Int) {
    let peer = try ScriptProgram(
        "cookie-header-libsoup.c",
        linking: "$(pkg-config --cflags --libs libsoup-3.0)",
        needs: "libsoup-3.0-dev"
    )
    let text = try peer.run()
    func value(_ name: String) -> Int? {
        text.split(separator: "\n").first { $0.hasPrefix(name + ": ") }
            .flatMap { Int($0.dropFirst(name.count + 2).prefix { $0.isNumber }) }
    }
    guard let median = value("libsoup_cookie_header_median"),
        let bytes = value("libsoup_header_bytes_per_lookup")
    else { throw BenchmarkError("unexpected output from the libsoup peer: \(text)") }
    return (median, bytes)
}
