import Foundation
public import FoundationNetworking

/// What a ``LoaderDownload`` tells its delegate: NSURLDownload's delegate contract.
///
/// Messages of one download arrive one at a time on its delegate queue, in this order: begin;
/// redirects and challenges as they happen; the response (or, when continuing, `willResumeWith`);
/// the destination decided and created; data lengths; finish or failure. After finish, failure
/// or `cancel()` none follows. Every method has a default.
public protocol LoaderDownloadDelegate: AnyObject, Sendable {
    func downloadDidBegin(_ download: LoaderDownload)

    /// A redirect (the first request is not offered): return the request to follow, another, or
    /// nil to stop there (the redirect response is then what is downloaded).
    func download(
        _ download: LoaderDownload,
        willSend request: URLRequest,
        redirectResponse: URLResponse
    ) -> URLRequest?

    /// An authentication challenge, after the credential storage had its chance, exactly as a
    /// connection's delegate gets it. Default: default handling.
    func download(_ download: LoaderDownload, willSendRequestFor challenge: URLAuthenticationChallenge)

    /// The response of the entity to be saved from its first byte (also when a resumed download
    /// starts over because the entity changed).
    func download(_ download: LoaderDownload, didReceive response: URLResponse)

    /// A resumed download continues: bytes before `startingByte` are already on disk.
    func download(_ download: LoaderDownload, willResumeWith response: URLResponse, fromByte startingByte: Int64)

    /// `length` more bytes were saved (progress: the sum against the response's expected length).
    func download(_ download: LoaderDownload, didReceiveDataOfLength length: Int)

    /// Whether a file of this type (`application/gzip`, the seed's MacBinary and BinHex types)
    /// is to be decoded once it has arrived. Default: no. Keyjar decodes gzip; a download asked
    /// to decode another of these types fails with `.cannotDecodeContentData`, saying why.
    func download(_ download: LoaderDownload, shouldDecodeSourceDataOfMIMEType encodingType: String) -> Bool

    /// Choose where to save: call `download.setDestination(_:allowOverwrite:)`. `filename` is
    /// the server's name for it (Content-Disposition, else the URL's last path component, else
    /// `index.html`), made safe. Default: that name in the download's directory, without
    /// overwriting (a unique name like `report-1.pdf` is made).
    func download(_ download: LoaderDownload, decideDestinationWithSuggestedFilename filename: String)

    /// The data is being saved for `path` (the partial file beside it holds it until the end).
    /// Sent again, with the new name, in the rare case that the name was taken by someone else
    /// while the download ran and overwriting was not allowed.
    func download(_ download: LoaderDownload, didCreateDestination path: String)

    func downloadDidFinish(_ download: LoaderDownload)

    /// The download failed: a `URLError` with the failing URL. When the server named a
    /// validator, `download.resumeData` can continue it (unless `deletesFileUponFailure`).
    func download(_ download: LoaderDownload, didFailWithError error: any Error)
}

extension LoaderDownloadDelegate {
    public func downloadDidBegin(_ download: LoaderDownload) {}
    public func download(
        _ download: LoaderDownload,
        willSend request: URLRequest,
        redirectResponse: URLResponse
    ) -> URLRequest? {
        request
    }
    public func download(_ download: LoaderDownload, willSendRequestFor challenge: URLAuthenticationChallenge) {
        challenge.sender?.performDefaultHandling(for: challenge)
    }
    public func download(_ download: LoaderDownload, didReceive response: URLResponse) {}
    public func download(_ download: LoaderDownload, willResumeWith response: URLResponse, fromByte startingByte: Int64)
    {}
    public func download(_ download: LoaderDownload, didReceiveDataOfLength length: Int) {}
    public func download(_ download: LoaderDownload, shouldDecodeSourceDataOfMIMEType encodingType: String) -> Bool {
        false
    }
    public func download(_ download: LoaderDownload, decideDestinationWithSuggestedFilename filename: String) {
        download.setDestination(
            (download.directory as NSString).appendingPathComponent(filename),
            allowOverwrite: false
        )
    }
    public func download(_ download: LoaderDownload, didCreateDestination path: String) {}
    public func downloadDidFinish(_ download: LoaderDownload) {}
    public func download(_ download: LoaderDownload, didFailWithError error: any Error) {}
}
