public import FoundationEssentials

// Foundation's `HTTPCookie.cookies(withResponseHeaderFields:for:)` and
// `HTTPCookie.requestHeaderFields(with:)` on Keyjar's cookie: header fields to cookies and back,
// touching no store.
extension Cookie {
    /// The cookies a response's header fields set for `url`, without storing any.
    ///
    /// Every `Set-Cookie` field is read (its name in any case; other fields are ignored), and
    /// a value Foundation joined from repeated fields is split back (``setCookieLines(inJoinedHeader:)``).
    /// Each line is parsed and checked by RFC 6265bis's storage model as a jar checks it for a
    /// request to `url`: a Domain that does not match the host or is a public suffix, a Secure
    /// cookie from an insecure origin, an unmet `__Secure-`/`__Host-` prefix give no cookie.
    /// What only storing decides is left to the storage that is handed the result: the accept
    /// policy and domain rules, and the cookies it already holds. A cookie already expired
    /// (`Max-Age=0`) is kept, since storing it deletes its twin. Creation times increase from
    /// `now` in header order.
    ///
    /// Unlike Foundation on Linux, which takes any Domain it is sent, a cookie here is one a
    /// storage would accept from that URL.
    ///
    /// ```swift
    /// let url = URL(string: "https://www.example.com/account/login")!
    /// let cookies = Cookie.cookies(
    ///     withResponseHeaderFields: ["Set-Cookie": "sid=42; Domain=example.com; Secure, theme=dark"],
    ///     for: url)
    /// cookies.map(\.name)   // ["sid", "theme"]
    /// cookies[1].path       // "/account"
    /// ```
    public static func cookies(
        withResponseHeaderFields headerFields: [String: String],
        for url: URL,
        now: Date = Date(),
        publicSuffixes: PublicSuffixList = .system
    ) -> [Cookie] {
        guard let context = CookieContext(url: url) else { return [] }
        // A jar of its own, empty and never stored to: only its storage-model rule is used.
        var jar = CookieJar(publicSuffixes: publicSuffixes)
        var cookies: [Cookie] = []
        // Sorted: a dictionary's order is not the same from one run to the next.
        for field in headerFields.keys.sorted() where field.lowercased() == "set-cookie" {
            for line in setCookieLines(inJoinedHeader: headerFields[field] ?? "") {
                guard let parsed = try? SetCookieParser.parse(line) else { continue }
                let created = now.addingTimeInterval(Double(cookies.count) * 1e-6)
                if case .success(let cookie) = jar.makeCookie(from: parsed, context: context, now: created) {
                    cookies.append(cookie)
                }
            }
        }
        return cookies
    }

    /// The header fields that send `cookies` with a request: `["Cookie": "a=1; b=2"]` in the
    /// order given (a nameless cookie as its value alone), `[:]` for none. Which cookies go
    /// with a request is a storage's question (its `cookies(for:)`); this only writes them.
    public static func requestHeaderFields(with cookies: [Cookie]) -> [String: String] {
        guard !cookies.isEmpty else { return [:] }
        return ["Cookie": cookies.map(\.headerPair).joined(separator: "; ")]
    }

    /// The Set-Cookie lines of a field value in which repeated Set-Cookie fields were joined
    /// with ", " (as Foundation's `HTTPURLResponse.allHeaderFields` joins them). A comma starts
    /// a new cookie only when what follows looks like `name=` before any `;`, so the comma in
    /// `Expires=Wed, 09 Jun 2027 …` stays inside its cookie.
    public static func setCookieLines(inJoinedHeader value: String) -> [String] {
        var lines: [String] = []
        var current = ""
        let parts = value.split(separator: ",", omittingEmptySubsequences: false)
        for (index, part) in parts.enumerated() {
            if index > 0 && startsCookie(part) {
                lines.append(current)
                current = String(part.drop { $0 == " " })
            } else {
                current += (index > 0 ? "," : "") + part
            }
        }
        lines.append(current)
        return lines.map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
    }

    private static func startsCookie(_ part: Substring) -> Bool {
        let beforeSemicolon = part.prefix { $0 != ";" }
        guard let equals = beforeSemicolon.firstIndex(of: "=") else { return false }
        let name = beforeSemicolon[..<equals].trimmingWhitespace()
        return !name.isEmpty && !name.contains(" ") && name.first?.isNumber == false
    }
}
