import Foundation
import FoundationNetworking
import KeyjarTransfer

/// The HTTP responses a loader delivers: Foundation's, with Apple's `suggestedFilename`.
/// Foundation on Linux answers "Unknown" for a response without a Content-Disposition file
/// name; Apple's documented rule goes on to the URL: "If no valid filename is specified using
/// that mechanism, this method checks the last path component of the URL. If no valid filename
/// can be obtained using the last path component, this method uses the URL's host as the
/// filename. If the URL's host can't be converted to a valid filename, the filename 'unknown'
/// is used." Names are made safe (``SuggestedFilename/sanitize(_:)``); no extension is added
/// from the MIME type, which Apple's sometimes does.
final class LoaderHTTPURLResponse: HTTPURLResponse, @unchecked Sendable {
    // @unchecked: no state of its own; the superclass's is immutable after init.

    override var suggestedFilename: String? {
        Self.suggestedFilename(contentDisposition: value(forHTTPHeaderField: "Content-Disposition"), url: url)
    }

    static func suggestedFilename(contentDisposition: String?, url: URL?) -> String {
        if let field = contentDisposition, let name = ContentDisposition(field)?.filename,
            let safe = SuggestedFilename.sanitize(name)
        {
            return safe
        }
        if let last = url?.lastPathComponent, let safe = SuggestedFilename.sanitize(last) { return safe }
        if let host = url?.host, let safe = SuggestedFilename.sanitize(host) { return safe }
        return "unknown"
    }
}

extension ResponseHead {
    /// The head as the response a loader delivers for `url`.
    func httpResponse(for url: URL) -> HTTPURLResponse? {
        LoaderHTTPURLResponse(
            url: url,
            statusCode: statusCode,
            httpVersion: httpVersion,
            headerFields: headerDictionary
        )
    }
}
