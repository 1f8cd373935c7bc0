/// Cookie path rules of RFC 6265bis §5.1.4.
public enum CookiePath {
    /// The default-path of a request path: up to, not including, its right-most "/", or "/".
    public static func defaultPath(of requestPath: String) -> String {
        let bytes = requestPath.utf8
        guard bytes.first == UInt8(ascii: "/"),
            let lastSlash = bytes.lastIndex(of: UInt8(ascii: "/")), lastSlash != bytes.startIndex
        else { return "/" }
        return String(requestPath[..<lastSlash])
    }

    /// Whether `requestPath` path-matches `cookiePath`: identical, or `cookiePath` is a prefix
    /// that ends in "/" or is followed by "/" in the request path.
    @inline(__always)
    public static func matches(_ requestPath: String, _ cookiePath: String) -> Bool {
        let requestCount = requestPath.utf8.count
        let cookieCount = cookiePath.utf8.count
        guard requestCount >= cookieCount else { return false }
        return Bytes.with(requestPath) { request in
            Bytes.with(cookiePath) { cookie in
                guard Bytes.equal(request, at: 0, cookie) else { return false }
                return requestCount == cookieCount || cookie[cookieCount - 1] == UInt8(ascii: "/")
                    || request[cookieCount] == UInt8(ascii: "/")
            }
        }
    }
}
