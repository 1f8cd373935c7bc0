public import Foundation
public import KeyjarCodec
public import KeyjarCore
import KeyjarProtocol

/// Cookie requests, answered by keyjard itself (not the replica): what a one-shot client asks,
/// and what an application asks when it wants keyjard's word rather than its copy.
extension KeyjarClient {
    /// The Cookie header keyjard would send with a request to `url`, or nil when no cookie
    /// goes with it.
    /// - Throws: ``KeyjarClientError``; `.refused` for a URL without a host.
    public func cookieHeader(
        for url: URL,
        mainDocumentURL: URL? = nil,
        isTopLevelNavigation: Bool = true,
        httpMethod: String = "GET"
    ) throws(KeyjarClientError) -> String? {
        let context = Self.context(url, mainDocumentURL, isTopLevelNavigation, httpMethod)
        guard case .cookieHeader(let header) = try call(.cookieHeader(context: context)) else {
            throw Self.unexpectedReply
        }
        return header
    }

    /// Stores a response's Set-Cookie lines (one each, never comma-joined) under the accept
    /// policy and domain rules.
    /// - Returns: per line, whether it was stored or why not.
    @discardableResult
    public func storeCookies(
        _ setCookieLines: [String],
        for url: URL,
        mainDocumentURL: URL? = nil,
        isTopLevelNavigation: Bool = true,
        httpMethod: String = "GET"
    ) throws(KeyjarClientError) -> [CookieStoreOutcome] {
        let context = Self.context(url, mainDocumentURL, isTopLevelNavigation, httpMethod)
        guard case .cookieOutcomes(let outcomes, _) = try call(.setCookies(headers: setCookieLines, context: context))
        else {
            throw Self.unexpectedReply
        }
        return outcomes.map(CookieStoreOutcome.init)
    }

    /// Stores cookies a program built (no accept policy, as `HTTPCookieStorage.setCookie`).
    /// - Returns: per cookie, nil when stored, else why not.
    @discardableResult
    public func insertCookies(_ cookies: [Cookie]) throws(KeyjarClientError) -> [CookieStoreOutcome] {
        guard case .cookieOutcomes(let outcomes, _) = try call(.insertCookies(cookies: cookies)) else {
            throw Self.unexpectedReply
        }
        return outcomes.map(CookieStoreOutcome.init)
    }

    /// Every stored cookie, or those of `domain` and its subdomains.
    public func cookies(domain: String? = nil) throws(KeyjarClientError) -> [Cookie] {
        guard case .cookies(let cookies) = try call(.listCookies(domain: domain)) else { throw Self.unexpectedReply }
        return cookies
    }

    public func deleteCookies(_ identities: [Cookie.Identity]) throws(KeyjarClientError) {
        _ = try call(.deleteCookies(identities: identities))
    }

    /// Deletes every cookie, or those of `domain` and its subdomains.
    public func clearCookies(domain: String? = nil) throws(KeyjarClientError) {
        _ = try call(.clearCookies(domain: domain))
    }

    /// Deletes the cookies created at or after `date`.
    public func removeCookies(createdSince date: Date) throws(KeyjarClientError) {
        _ = try call(.removeCookiesCreated(since: date.timeIntervalSince1970))
    }

    /// Imports a cookie file, or one batch of it (`CookieFileBatcher`), in one transaction.
    /// - Parameter firstLine: the number its first line (or JSON element) has in the whole
    ///   file; problems are numbered from it.
    /// - Returns: how many were imported and skipped as expired, and each problem with its line.
    public func importCookies(
        _ text: String,
        format: CookieFileFormat,
        firstLine: Int? = nil
    ) throws(KeyjarClientError) -> CookieImportReport {
        let response = try call(.importCookies(format: format, text: text, firstLine: firstLine))
        guard
            case .importReport(let imported, let expired, let problems, _, let added, let replaced, let evicted) =
                response
        else {
            throw Self.unexpectedReply
        }
        var report = CookieImportReport()
        report.imported = imported
        report.expired = expired
        report.problems = problems
        report.added = added ?? imported
        report.replaced = replaced ?? 0
        report.evicted = evicted ?? 0
        return report
    }

    /// Every stored cookie as a file; `includeSameSite` adds libsoup's SameSite column to
    /// cookies.txt (curl then rejects those lines).
    public func exportCookies(
        format: CookieFileFormat,
        includeSameSite: Bool = false
    ) throws(KeyjarClientError) -> String {
        guard case .exported(let text) = try call(.exportCookies(format: format, includeSameSite: includeSameSite))
        else {
            throw Self.unexpectedReply
        }
        return text
    }

    private static func context(
        _ url: URL,
        _ mainDocumentURL: URL?,
        _ isTopLevelNavigation: Bool,
        _ httpMethod: String
    ) -> WireCookieContext {
        WireCookieContext(
            url: url.absoluteString,
            mainDocumentURL: mainDocumentURL?.absoluteString,
            isTopLevelNavigation: isTopLevelNavigation,
            method: httpMethod
        )
    }

    /// A reply of the wrong kind: keyjard and this client disagree about the protocol. The
    /// reply itself is not shown: it could hold a password.
    static var unexpectedReply: KeyjarClientError {
        KeyjarClientError(
            code: .protocolViolation,
            message: "keyjard sent an unexpected reply; are this program and keyjard the same version?"
        )
    }
}
