/// Why a jar refused to store a cookie; `description` is a sentence a caller can show.
public enum CookieRejection: Error, Sendable, Hashable {
    case malformed(CookieParseError)
    case blockedByPolicy(CookieAcceptPolicy)
    case blockedByDomainRule(domain: String)
    case thirdParty(site: String, mainDocumentSite: String)
    case noHost
    case publicSuffix(domain: String)
    case publicSuffixListUnavailable(domain: String)
    case domainMismatch(domain: String, host: String)
    case nonASCIIDomain(domain: String)
    case secureFromInsecureOrigin
    case wouldOverwriteSecureCookie(name: String)
    case httpOnlyFromNonHTTPAPI
    case wouldOverwriteHttpOnlyCookie(name: String)
    case sameSiteFromCrossSiteRequest(SameSite)
    case sameSiteNoneWithoutSecure
    /// CHIPS: a partitioned cookie must be Secure.
    case partitionedWithoutSecure
    /// The top-level site gives no partition key a reader can take back (an IPv6 zone, a
    /// sub-delimiter in a host a URL parser let through).
    case unusablePartitionKey(String)
    case prefixRequirementsUnmet(prefix: String, requirement: String)
    case nameLooksLikePrefix
    case invalidCharacter(field: String)
    case attributeTooLong(field: String, bytes: Int)
    case invalidPath(String)
}

extension CookieRejection: CustomStringConvertible {
    public var description: String {
        switch self {
        case .malformed(let error): return "Malformed Set-Cookie: \(error)"
        case .blockedByPolicy(let policy): return "The accept policy '\(policy.rawValue)' refuses this cookie"
        case .blockedByDomainRule(let domain): return "Cookies from \(domain) are blocked by a domain rule"
        case .thirdParty(let site, let mainSite):
            return "\(site) is a third party to the main document's site \(mainSite)"
        case .noHost: return "The request URL has no host"
        case .publicSuffix(let domain): return "Domain=\(domain) is a public suffix"
        case .publicSuffixListUnavailable(let domain):
            return "Domain=\(domain) cannot be checked: the public suffix list is unavailable"
        case .domainMismatch(let domain, let host): return "Domain=\(domain) does not match the host \(host)"
        case .nonASCIIDomain(let domain): return "Domain=\(domain) is not an ASCII host name"
        case .secureFromInsecureOrigin: return "A Secure cookie can only be set from a secure origin"
        case .wouldOverwriteSecureCookie(let name):
            return "An insecure origin may not overwrite the Secure cookie '\(name)'"
        case .httpOnlyFromNonHTTPAPI: return "An HttpOnly cookie cannot be set through a non-HTTP API"
        case .wouldOverwriteHttpOnlyCookie(let name):
            return "A non-HTTP API may not overwrite the HttpOnly cookie '\(name)'"
        case .sameSiteFromCrossSiteRequest(let mode):
            return "A SameSite=\(mode.enforced.rawValue) cookie cannot be set by a cross-site subresource request"
        case .sameSiteNoneWithoutSecure: return "SameSite=None requires the Secure attribute"
        case .partitionedWithoutSecure: return "A Partitioned cookie requires the Secure attribute"
        case .unusablePartitionKey(let key): return "The top-level site '\(key)' cannot key a Partitioned cookie"
        case .prefixRequirementsUnmet(let prefix, let requirement): return "A \(prefix) cookie must \(requirement)"
        case .nameLooksLikePrefix: return "A nameless cookie's value may not start with __Secure- or __Host-"
        case .invalidCharacter(let field): return "The cookie's \(field) contains a forbidden character"
        case .attributeTooLong(let field, let bytes):
            return
                "The cookie's \(field) is \(bytes) bytes long, over the limit of \(SetCookieParser.maximumAttributeValueBytes)"
        case .invalidPath(let path): return "The path '\(path)' does not start with '/'"
        }
    }
}
