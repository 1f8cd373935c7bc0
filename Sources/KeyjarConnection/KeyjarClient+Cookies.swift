public import FoundationEssentials
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
        try Self.importReport(try call(.importCookies(format: format, text: text, firstLine: firstLine)))
    }

    private static func importReport(_ response: Response) throws(KeyjarClientError) -> CookieImportReport {
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

    /// Begins an import of a file that arrives in batches (``importCookies(_:format:firstLine:)``
    /// with each batch's `firstLine`, as `CookieFileBatcher` gives them), planned by keyjard as
    /// one import: nothing of it is committed before ``finishCookieImport()``, and the other
    /// clients are told the net change of the whole file, never a cookie that one batch adds
    /// and a later one evicts. Until then each batch's report says what the batch held
    /// (`imported`, `expired`, `problems`); `added`, `replaced` and `evicted` come with the end.
    /// A connection that closes before the end leaves the store as it was.
    /// - Returns: false when keyjard predates planned imports: each batch is then an import of
    ///   its own, committed when it is sent, and there is nothing to finish.
    public func beginCookieImport() throws(KeyjarClientError) -> Bool {
        do {
            _ = try call(.beginImport)
            return true
        } catch  where error.wireCode == WireErrorCode.malformedMessage.rawValue {
            return false
        }
    }

    /// Ends the import begun by ``beginCookieImport()``: keyjard commits what the whole file
    /// comes to and answers once it is on disk.
    /// - Returns: the cookies of the file added and replacing stored ones, and the stored
    ///   cookies evicted to make room (its `imported` and `expired` are 0: the batches' reports
    ///   counted them).
    public func finishCookieImport() throws(KeyjarClientError) -> CookieImportReport {
        try Self.importReport(try call(.finishImport))
    }

    /// Every stored cookie as a file; `includeSameSite` adds libsoup's SameSite column to
    /// cookies.txt (curl then rejects those lines). cookies.txt cannot carry partitioned
    /// cookies: ``exportCookiesReportingOmitted(format:includeSameSite:)`` says how many it left out.
    public func exportCookies(
        format: CookieFileFormat,
        includeSameSite: Bool = false
    ) throws(KeyjarClientError) -> String {
        try exportCookiesReportingOmitted(format: format, includeSameSite: includeSameSite).text
    }

    /// Every stored cookie as a file, and how many cookies the format could not carry
    /// (partitioned cookies in cookies.txt, which has no column for their partition key).
    public func exportCookiesReportingOmitted(
        format: CookieFileFormat,
        includeSameSite: Bool = false
    ) throws(KeyjarClientError) -> (text: String, omitted: Int) {
        guard
            case .exported(let text, let omitted) = try call(
                .exportCookies(format: format, includeSameSite: includeSameSite)
            )
        else {
            throw Self.unexpectedReply
        }
        return (text, omitted)
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
