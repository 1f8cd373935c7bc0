public import Foundation
public import FoundationNetworking

// Making a download: the loader's entry points, beside its connections'.
extension URLLoader {
    /// A download of `request` to a file; the delegate decides where (by default the server's
    /// name in `directory`, the current directory unless given). With `resuming`, the download
    /// continues that one's partial data (into its destination) with the request's own fields.
    public func download(
        with request: URLRequest,
        delegate: (any LoaderDownloadDelegate)?,
        delegateQueue: DispatchQueue? = nil,
        directory: String? = nil,
        resuming: DownloadResumeData? = nil,
        startImmediately: Bool = true
    ) -> LoaderDownload {
        let download = LoaderDownload(
            request: request,
            loader: self,
            delegate: delegate,
            delegateQueue: delegateQueue,
            directory: resuming.map { ($0.destinationPath as NSString).deletingLastPathComponent } ?? directory
                ?? FileManager.default.currentDirectoryPath,
            resuming: resuming
        )
        if startImmediately { download.start() }
        return download
    }

    /// A download that continues the one `resumeData` came from (`LoaderDownload.resumeData`,
    /// the error's `NSURLSessionDownloadTaskResumeData`, or `DownloadResumeData.encoded()`).
    public func download(
        resumeData: Data,
        delegate: (any LoaderDownloadDelegate)?,
        delegateQueue: DispatchQueue? = nil,
        startImmediately: Bool = true
    ) throws(DownloadResumeDataError) -> LoaderDownload {
        let resuming = try DownloadResumeData(resumeData)
        return download(
            with: URLRequest(url: resuming.url),
            delegate: delegate,
            delegateQueue: delegateQueue,
            resuming: resuming,
            startImmediately: startImmediately
        )
    }
}
