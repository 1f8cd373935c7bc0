import Foundation
import FoundationNetworking
import Glibc
import KeyjarLoader

/// `keyjar-bench download`: a 1 GiB file from Debian's lighttpd on loopback (a sparse file: the
/// disk is not what is measured), saved by a LoaderDownload and by plain libcurl
/// (`scripts/download-floor.c`, compiled here) in the same run, alternated. Reports the
/// throughput ratio (target ≥ 0.9) and the growth of the process's peak RSS during the
/// download (target ≤ 16 MiB).
func runDownloadBenchmark() throws {
    let size: Int64 = 1 << 30
    let directory = NSTemporaryDirectory() + "keyjar-bench-download-\(getpid())"
    try FileManager.default.createDirectory(atPath: directory + "/www", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    guard FileManager.default.createFile(atPath: directory + "/www/big.bin", contents: nil),
        truncate(directory + "/www/big.bin", off_t(size)) == 0
    else { throw BenchmarkError("cannot make the 1 GiB file") }
    let (server, port) = try startLighttpd(root: directory + "/www", directory: directory)
    defer {
        kill(server, SIGKILL)
        _ = waitpid(server, nil, 0)
    }
    guard let url = URL(string: "http://127.0.0.1:\(port)/big.bin") else { throw BenchmarkError("no URL") }
    let floor = try ScriptProgram("download-floor.c", linking: "-lcurl")
    let loader = URLLoader(configuration: .init())
    // The files are written to memory (tmpfs) when it can hold them: the disk's write-back
    // varies by seconds between runs here and would drown the software's cost.
    let output = access("/dev/shm", W_OK) == 0 ? "/dev/shm/keyjar-bench-download-\(getpid())" : directory
    try FileManager.default.createDirectory(atPath: output, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: output) }
    print("download_1gib_files_in: \(output)")

    for round in 1...3 {
        // Alternated: each goes first in turn.
        var floorSeconds = 0.0
        if round % 2 == 1 {
            floorSeconds = try runFloor(floor, url: url, file: output + "/floor.bin")
            unlink(output + "/floor.bin")
        }
        let (seconds, growth) = try keyjarDownload(loader, url: url, file: output + "/keyjar.bin", size: size)
        unlink(output + "/keyjar.bin")
        if round % 2 == 0 {
            floorSeconds = try runFloor(floor, url: url, file: output + "/floor.bin")
            unlink(output + "/floor.bin")
        }
        let ratio = floorSeconds / seconds
        let mib = Double(size) / 1_048_576
        print(String(format: "download_1gib_round%d_floor_mib_per_s: %.0f MiB/s", round, mib / floorSeconds))
        print(String(format: "download_1gib_round%d_keyjar_mib_per_s: %.0f MiB/s", round, mib / seconds))
        print(String(format: "download_1gib_round%d_throughput_vs_libcurl: %.3f (target >= 0.9)", round, ratio))
        print(
            String(
                format: "download_1gib_round%d_peak_rss_growth: %.1f MiB (target <= 16)",
                round,
                Double(growth) / 1_048_576
            )
        )
    }
}

private func keyjarDownload(_ loader: URLLoader, url: URL, file: String, size: Int64) throws -> (Double, Int) {
    let before = memoryStatus("VmRSS")
    // Resets the peak (VmHWM) to the current RSS, so the peak read after is this download's.
    try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
    let delegate = BenchDownloadDelegate(destination: file)
    let start = DispatchTime.now().uptimeNanoseconds
    _ = loader.download(with: URLRequest(url: url), delegate: delegate)
    delegate.done.wait()
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    guard delegate.failure == nil, (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int64) == size
    else {
        throw BenchmarkError("the download failed: \(delegate.failure.map { "\($0)" } ?? "wrong size")")
    }
    return (seconds, max(0, memoryStatus("VmHWM") - before))
}

/// A field of /proc/self/status in bytes.
private func memoryStatus(_ field: String) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
        let line = text.split(separator: "\n").first(where: { $0.hasPrefix(field + ":") }),
        let kib = Int(line.dropFirst(field.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ")[0])
    else { return 0 }
    return kib * 1024
}

private final class BenchDownloadDelegate: LoaderDownloadDelegate, @unchecked Sendable {
    let destination: String
    let done = DispatchSemaphore(value: 0)
    var failure: (any Error)?
    init(destination: String) { self.destination = destination }
    func download(_ download: LoaderDownload, decideDestinationWithSuggestedFilename filename: String) {
        download.setDestination(destination, allowOverwrite: true)
    }
    func downloadDidFinish(_ download: LoaderDownload) { done.signal() }
    func download(_ download: LoaderDownload, didFailWithError error: any Error) {
        failure = error
        done.signal()
    }
}

private func runFloor(_ floor: ScriptProgram, url: URL, file: String) throws -> Double {
    let text = try floor.run([url.absoluteString, file])
    guard let seconds = ScriptProgram.number(after: " in ", in: text) else {
        throw BenchmarkError("unexpected output from the download floor: \(text)")
    }
    return seconds
}

private func startLighttpd(root: String, directory: String) throws -> (pid_t, Int) {
    for _ in 0..<5 {
        let port = Int.random(in: 20_000..<60_000)
        let configuration = """
            server.document-root = "\(root)"
            server.port = \(port)
            server.bind = "127.0.0.1"
            server.errorlog = "\(directory)/error.log"
            """
        try configuration.write(toFile: directory + "/lighttpd.conf", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/lighttpd")
        process.arguments = ["-D", "-f", directory + "/lighttpd.conf"]
        try process.run()
        for _ in 0..<100 {
            usleep(20_000)
            guard process.isRunning else { break }
            if let probe = URL(string: "http://127.0.0.1:\(port)/missing"),
                (try? URLLoader(configuration: .init()).sendSynchronousRequest(URLRequest(url: probe))) != nil
            {
                return (process.processIdentifier, port)
            }
        }
        if process.isRunning { process.terminate() }
    }
    throw BenchmarkError("lighttpd did not start (apt-get install lighttpd)")
}
