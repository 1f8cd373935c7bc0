import Foundation
import FoundationNetworking
import KeyjarCommands
import KeyjarLoader

/// Where `keyjar fetch` saves a body: `-o FILE` (replaced if it exists), or `-O` (the server's
/// name in a directory, unique unless `--overwrite`).
enum FetchFile {
    case path(String)
    case serverName(directory: String, overwrite: Bool)
}

/// Receives a `keyjar fetch -o` / `-O` download: chooses the destination, draws the progress
/// meter, writes the head (`-i`) to standard output, and answers challenges. An interrupted or
/// failed download keeps its partial data beside the destination when the server named a
/// validator, for `-C` to continue. Runs on the one serial queue given to the download.
final class FetchDownloadDelegate: LoaderDownloadDelegate, FetchReceiver, @unchecked Sendable {
    private let options: FetchOptions
    let answerer: ChallengeAnswerer
    private let file: FetchFile
    private var ending: FetchEnding
    var download: LoaderDownload?
    var signalSources: [any DispatchSourceSignal] = []
    private(set) var status: Int?
    /// Where the body was saved (or is being saved).
    private(set) var savedPath: String?

    init(
        options: FetchOptions,
        answerer: ChallengeAnswerer,
        file: FetchFile,
        completion: @escaping @Sendable (FetchOutcome) -> Void
    ) {
        self.options = options
        self.answerer = answerer
        self.file = file
        ending = FetchEnding(showProgress: options.showProgress, completion: completion)
    }

    func begin() { download?.start() }

    /// Interrupted or out of time: the partial data is kept (when it can be continued).
    func stop(because error: CLIError) {
        guard ending.isOpen else { return }
        let kept = download?.cancelProducingResumeData() != nil
        ending.end(.failed(kept ? withResumeHint(error) : error))
    }

    /// A response that must not be saved (--fail, a refused password): nothing is kept.
    private func refuse(_ outcome: FetchOutcome) {
        guard ending.isOpen else { return }
        download?.cancel()
        ending.end(outcome)
    }

    private func withResumeHint(_ error: CLIError) -> CLIError {
        guard let savedPath else { return error }
        return CLIError(
            message: error.message + "\nThe data so far is kept in \(DownloadResumeData.partialPath(for: savedPath)); "
                + "keyjar fetch -C with the same output continues it.",
            status: error.status
        )
    }

    // MARK: LoaderDownloadDelegate

    func download(
        _ download: LoaderDownload,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        // The first request goes as it is; redirects follow the command's options.
        guard redirectResponse != nil else { return request }
        return options.redirect(request, after: download.responseHeadLines) { Output.write($0) }
    }

    func download(_ download: LoaderDownload, willSendRequestFor challenge: URLAuthenticationChallenge) {
        answerer.answer(challenge)
    }

    func download(_ download: LoaderDownload, didReceive response: URLResponse) {
        guard accept(response, of: download) else { return }
        ending.meter?.reset(expectedLength: response.expectedContentLength)
    }

    func download(_ download: LoaderDownload, willResumeWith response: URLResponse, fromByte startingByte: Int64) {
        guard accept(response, of: download) else { return }
        ending.meter?.reset(expectedLength: response.expectedContentLength)
    }

    /// Whether the response is to be saved; shows its head with -i.
    private func accept(_ response: URLResponse, of download: LoaderDownload) -> Bool {
        status = (response as? HTTPURLResponse)?.statusCode
        if let path = download.destinationPath { savedPath = path }
        if let failure = options.failure(for: response) {
            refuse(.failed(failure))
            return false
        }
        if answerer.refused {
            // The command says so; the refusal page is not saved.
            refuse(.finished(status: status))
            return false
        }
        if options.includeHead, let lines = download.responseHeadLines { Output.write(options.shownHead(lines)) }
        return true
    }

    func download(_ download: LoaderDownload, decideDestinationWithSuggestedFilename filename: String) {
        switch file {
        case .path(let path): download.setDestination(path, allowOverwrite: true)
        case .serverName(let directory, let overwrite):
            download.setDestination((directory as NSString).appendingPathComponent(filename), allowOverwrite: overwrite)
        }
    }

    func download(_ download: LoaderDownload, didCreateDestination path: String) {
        savedPath = path
    }

    func download(_ download: LoaderDownload, didReceiveDataOfLength length: Int) {
        ending.meter?.add(length)
    }

    func downloadDidFinish(_ download: LoaderDownload) {
        ending.end(.finished(status: status))
    }

    func download(_ download: LoaderDownload, didFailWithError error: any Error) {
        let failure = CLIError.failure(FetchDelegate.describe(error))
        ending.end(.failed(download.resumeData != nil ? withResumeHint(failure) : failure))
    }
}
