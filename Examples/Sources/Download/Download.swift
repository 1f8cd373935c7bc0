// A download to disk that can be continued where it stopped, in this process or another.
// snippet: download
import Foundation
import FoundationNetworking  // URLRequest lives here on Linux
import KeyjarLoader

/// How a download ended.
enum Ending: Sendable {
    case finished
    /// `resumeData` continues it (nil when the server named no validator to resume against).
    case failed(any Error, resumeData: Data?)
}

/// Reports a download's progress and its end, which `ending()` awaits.
final class Saver: LoaderDownloadDelegate {
    private let endings: AsyncStream<Ending>
    private let end: AsyncStream<Ending>.Continuation

    init() { (endings, end) = AsyncStream.makeStream() }

    func ending() async -> Ending {
        for await ending in endings { return ending }
        return .failed(CancellationError(), resumeData: nil)
    }

    func download(_ d: LoaderDownload, didCreateDestination path: String) { print("saving", path) }
    func download(_ d: LoaderDownload, didReceiveDataOfLength length: Int) {}  // progress: length more bytes
    func downloadDidFinish(_ d: LoaderDownload) { end.yield(.finished) }
    func download(_ d: LoaderDownload, didFailWithError error: any Error) {
        end.yield(.failed(error, resumeData: d.resumeData))
    }
}

@main
struct DownloadExample {
    static func main() async throws {
        let loader = try await URLLoader.shared()
        let url = URL(string: CommandLine.arguments.dropFirst().first ?? "https://example.com/report.pdf")!
        let directory = FileManager.default.currentDirectoryPath
        var saver = Saver()
        // Saved under the server's name for it (Content-Disposition, else the URL's), never replacing
        // a file; the bytes go to NAME.keyjar-part until the download is complete.
        var download = loader.download(with: URLRequest(url: url), delegate: saver, directory: directory)
        var ending = await saver.ending()
        if case .failed(_, let resumeData?) = ending {
            // Later, in this process or another (the resume data is also kept as NAME.keyjar-resume):
            saver = Saver()
            download = try loader.download(resumeData: resumeData, delegate: saver)
            ending = await saver.ending()
        }
        print(ending, download.destinationPath ?? "")
    }
}
// snippet end
