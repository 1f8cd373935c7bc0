import Foundation
public import FoundationNetworking

/// What a ``LoaderDownload`` tells its delegate: NSURLDownload's delegate contract.
///
/// Messages of one download arrive one at a time on its delegate queue, in this order: begin;
/// the request to send; redirects and challenges as they happen; the response (or, when
/// continuing, `willResumeWith`); whether to decode it; the destination decided and created;
/// data lengths; finish or failure. After finish, failure or `cancel()` none follows (but
/// `didCancel` for a challenge the delegate was holding). Every method has a default.
public protocol LoaderDownloadDelegate: AnyObject, Sendable {
    func downloadDidBegin(_ download: LoaderDownload)

    /// The request about to be sent: first its canonical form (`redirectResponse` nil; again
    /// when a resumed download has to start over from the first byte), then each redirect.
    /// Return it, another to send instead, or nil: nil to a redirect stops there (the redirect
    /// response is then what is downloaded); nil to the first request fails the download with
    /// `URLError.cancelled` (a resumed download's partial data kept, its resume data in the
    /// error), as nil to a connection's first request fails the load.
    /// Default: the request as it is.
    func download(
        _ download: LoaderDownload,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest?

    /// An authentication challenge, after the credential storage had its chance, exactly as a
    /// connection's delegate gets it; answer it through its `sender`, at any time and on any
    /// thread (the download waits). Default: `download(_:didReceive:)` is sent the challenge.
    func download(_ download: LoaderDownload, willSendRequestFor challenge: URLAuthenticationChallenge)

    /// NSURLDownloadDelegate's `download:didReceiveAuthenticationChallenge:`, the URL Loading
    /// System guide's way to answer a challenge: sent by the default `willSendRequestFor`, so a
    /// delegate implements one of the two. Default: default handling (the credential storage's
    /// credential unless it already failed, else the load goes on without one).
    func download(_ download: LoaderDownload, didReceive challenge: URLAuthenticationChallenge)

    /// NSURLDownloadDelegate's `download:didCancelAuthenticationChallenge:`: a challenge the
    /// delegate was given is void, so a prompt for it can close. Sent when the challenge's
    /// sender was told to cancel it (the download then fails with `.userCancelledAuthentication`)
    /// and when the download was cancelled while the delegate held it, the one message that may
    /// come after `cancel()`. Default: nothing.
    func download(_ download: LoaderDownload, didCancel challenge: URLAuthenticationChallenge)

    /// The response of the entity to be saved from its first byte (also when a resumed download
    /// starts over because the entity changed).
    func download(_ download: LoaderDownload, didReceive response: URLResponse)

    /// A resumed download continues: bytes before `startingByte` are already on disk.
    func download(_ download: LoaderDownload, willResumeWith response: URLResponse, fromByte startingByte: Int64)

    /// `length` more bytes were saved (progress: the sum against the response's expected length).
    func download(_ download: LoaderDownload, didReceiveDataOfLength length: Int)

    /// Whether a file of an encoding the download decodes (NSURLDownload's three: MacBinary,
    /// BinHex 4.0, gzip) is to be decoded once it has arrived. Asked only for a response of one
    /// of their MIME types, under that type first, then under each other name Apple's
    /// documentation and the Linux MIME database give the format, until the answer is yes:
    /// MacBinary `application/macbinary`, `application/x-macbinary`; BinHex
    /// `application/mac-binhex40`, `application/binhex` (and a server's
    /// `application/x-binhex40`); gzip `application/gzip`, `application/x-gzip` (and
    /// `application/x-gunzip`). So a delegate that compares with any of the documented names
    /// works. Default: no, the file is saved as it came.
    ///
    /// Decoded, a MacBinary (I, II or III) or BinHex file saves its data fork under the
    /// destination: the name is the server's without `.bin` or `.hqx`, not the one in the
    /// file's header (that arrives after the destination is decided, and is a Mac name that may
    /// hold `/`). Linux files have no resource fork or Finder information: they are checked
    /// (BinHex's CRCs cover the resource fork too) and dropped; to keep them, answer no and
    /// save the encoded file. A damaged or truncated file fails the download with
    /// `.cannotDecodeContentData` saying what is wrong, and nothing is left behind. One layer
    /// is decoded: a gzip inside a BinHex file stays gzip.
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

    /// The download failed: a `URLError` with the failing URL; `.fileDoesNotExist` when the
    /// server answered with an error page (HTTP 400 or more; ``LoaderDownload`` says why that
    /// code). When the server named a validator, `download.resumeData` can continue it (unless
    /// `deletesFileUponFailure`).
    func download(_ download: LoaderDownload, didFailWithError error: any Error)
}

extension LoaderDownloadDelegate {
    public func downloadDidBegin(_ download: LoaderDownload) {}
    public func download(
        _ download: LoaderDownload,
        willSend request: URLRequest,
        redirectResponse: URLResponse?
    ) -> URLRequest? {
        request
    }
    public func download(_ download: LoaderDownload, willSendRequestFor challenge: URLAuthenticationChallenge) {
        self.download(download, didReceive: challenge)
    }
    public func download(_ download: LoaderDownload, didReceive challenge: URLAuthenticationChallenge) {
        challenge.sender?.performDefaultHandling(for: challenge)
    }
    public func download(_ download: LoaderDownload, didCancel challenge: URLAuthenticationChallenge) {}
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
