import CCurl
import Foundation
import Glibc
import KeyjarTransfer

/// Builds the `URLError`s a loader reports: Foundation's codes, with the failing URL and a
/// sentence in `userInfo` as Foundation's own loaders put them there.
enum LoaderError {
    /// Foundation's `NSURLErrorFailingURLStringErrorKey`, by value: swift-corelibs-foundation
    /// marks the constant deprecated, but Apple's code (and code ported from it) still reads it.
    static let failingURLStringKey = "NSErrorFailingURLStringKey"

    static func make(
        _ code: URLError.Code,
        _ description: String,
        url: URL?,
        underlying: (any Error)? = nil
    ) -> URLError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: description]
        if let url {
            // Foundation's two failing-URL keys; a password in the URL is not repeated.
            let shown = LoaderConnection.urlWithoutPassword(url)
            info[NSURLErrorFailingURLErrorKey] = shown
            info[failingURLStringKey] = shown.absoluteString
        }
        if let underlying { info[NSUnderlyingErrorKey] = underlying }
        return URLError(code, userInfo: info)
    }

    /// Foundation's codes for libcurl's failures (as swift-corelibs-foundation maps them, plus
    /// the file:/ftp: and TLS cases it leaves as `.unknown`).
    static func code(for result: CurlResult) -> URLError.Code {
        if result.headProblem != nil { return .badServerResponse }
        let code = CURLcode(rawValue: result.code)
        switch code {
        // Schemes are checked before libcurl sees a URL, so this is a reply libcurl refused
        // (an HTTP/0.9 or otherwise non-HTTP answer).
        case CURLE_UNSUPPORTED_PROTOCOL: return .badServerResponse
        case CURLE_URL_MALFORMAT: return .badURL
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return .cannotFindHost
        case CURLE_COULDNT_CONNECT:
            return result.osErrno == Int(ETIMEDOUT) ? .timedOut : .cannotConnectToHost
        case CURLE_OPERATION_TIMEDOUT: return .timedOut
        case CURLE_WEIRD_SERVER_REPLY, CURLE_GOT_NOTHING, CURLE_BAD_CONTENT_ENCODING, CURLE_HTTP2, CURLE_HTTP2_STREAM,
            CURLE_FTP_WEIRD_PASV_REPLY, CURLE_FTP_WEIRD_227_FORMAT:
            return .badServerResponse
        case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR: return .networkConnectionLost
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE: return .serverCertificateUntrusted
        case CURLE_SSL_CONNECT_ERROR: return .secureConnectionFailed
        case CURLE_SSL_CERTPROBLEM: return .clientCertificateRejected
        case CURLE_FILE_COULDNT_READ_FILE, CURLE_REMOTE_FILE_NOT_FOUND: return .fileDoesNotExist
        case CURLE_REMOTE_ACCESS_DENIED: return .noPermissionsToReadFile
        case CURLE_LOGIN_DENIED: return .userAuthenticationRequired
        case CURLE_READ_ERROR, CURLE_ABORTED_BY_CALLBACK: return .requestBodyStreamExhausted
        case CURLE_TOO_MANY_REDIRECTS: return .httpTooManyRedirects
        default: return .unknown
        }
    }

    static func make(for result: CurlResult, url: URL) -> URLError {
        let reason = result.headProblem ?? result.message
        return make(
            code(for: result),
            "Loading \(LoaderConnection.urlWithoutPassword(url).absoluteString) failed: \(reason)",
            url: url
        )
    }
}
