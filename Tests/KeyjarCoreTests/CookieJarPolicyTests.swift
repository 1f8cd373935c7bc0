import Foundation
import KeyjarCore
import KeyjarTestSupport
import Testing

/// Accept policies, per-domain rules, and Chromium's limits with eviction.
struct CookieJarPolicyTests {
    @Test func neverAcceptsNothing() {
        var jar = CookieJar(policy: CookiePolicy(acceptPolicy: .never))
        #expect(jar.set("a=1", from: "http://example.com/") == .blockedByPolicy(.never))
    }

    @Test func mainDocumentDomainComparesRegistrableDomains() {
        var jar = CookieJar(policy: CookiePolicy(acceptPolicy: .onlyFromMainDocumentDomain))
        // Sibling subdomains of one registrable domain are one site...
        #expect(jar.set("a=1", from: "https://api.example.co.uk/", main: "https://www.example.co.uk/") == nil)
        // ...a string suffix is not, and neither is a different site under the same public suffix.
        #expect(
            jar.set("b=1", from: "https://badexample.co.uk/", main: "https://example.co.uk/")
                == .thirdParty(site: "badexample.co.uk", mainDocumentSite: "example.co.uk")
        )
        #expect(jar.set("c=1", from: "https://x.github.io/", main: "https://y.github.io/") != nil)
        // No main document: a direct load is first party.
        #expect(jar.set("d=1", from: "https://tracker.net/") == nil)
        // It does not stop sending.
        #expect(jar.header(for: "https://api.example.co.uk/", main: "https://other.org/") == "a=1")
    }

    @Test func noThirdPartyAlsoStopsSendingToThirdParties() {
        var jar = CookieJar(policy: CookiePolicy(acceptPolicy: .noThirdParty))
        jar.accept("a=1; SameSite=None; Secure", from: "https://tracker.net/")
        #expect(jar.header(for: "https://tracker.net/") == "a=1")
        #expect(jar.header(for: "https://tracker.net/", main: "https://news.org/") == "")
        #expect(
            jar.set("b=1; SameSite=None; Secure", from: "https://tracker.net/", main: "https://news.org/")
                == .thirdParty(site: "tracker.net", mainDocumentSite: "news.org")
        )
    }

    @Test func grandfatheredThirdPartyAcceptsKnownSitesOnly() {
        var jar = CookieJar(policy: CookiePolicy(acceptPolicy: .grandfatheredThirdParty))
        let thirdParty = "b=1; SameSite=None; Secure"
        #expect(jar.set(thirdParty, from: "https://cdn.tracker.net/", main: "https://news.org/") != nil)
        jar.accept("first=1", from: "https://www.tracker.net/")  // visited first party
        #expect(jar.set(thirdParty, from: "https://cdn.tracker.net/", main: "https://news.org/") == nil)
    }

    @Test func domainRulesOutrankTheGlobalPolicy() throws {
        var jar = CookieJar(policy: CookiePolicy(acceptPolicy: .never, domainRules: ["trusted.com": .allow]))
        #expect(jar.set("a=1", from: "https://login.trusted.com/") == nil)
        #expect(jar.set("a=1", from: "https://nottrusted.com/") == .blockedByPolicy(.never))

        jar.policy = CookiePolicy(acceptPolicy: .always, domainRules: ["ads.com": .block, "ok.ads.com": .allow])
        #expect(jar.set("a=1", from: "https://x.ads.com/") == .blockedByDomainRule(domain: "ads.com"))
        #expect(jar.set("a=1", from: "https://ok.ads.com/") == nil)  // the more specific rule wins
        #expect(jar.header(for: "https://ok.ads.com/") == "a=1")
        jar.policy.domainRules["ok.ads.com"] = .block
        #expect(jar.header(for: "https://ok.ads.com/") == "")  // block stops sending too

        jar.policy = CookiePolicy(acceptPolicy: .always, domainRules: ["news.org": .sessionOnly])
        jar.accept("p=1; Max-Age=3600", from: "https://www.news.org/")
        #expect(try #require(jar.allCookies.first { $0.name == "p" }).isSession)
        // A deletion still deletes under session-only.
        jar.accept("p=1; Max-Age=0", from: "https://www.news.org/")
        #expect(jar.allCookies.first { $0.name == "p" } == nil)
        // Session-only outranks the global policy too: accepted even as a third party.
        jar.policy.acceptPolicy = .noThirdParty
        jar.accept(
            "q=1; Max-Age=3600; SameSite=None; Secure",
            from: "https://cdn.news.org/",
            main: "https://blog.example/"
        )
        #expect(try #require(jar.allCookies.first { $0.name == "q" }).isSession)
    }

    @Test func policyRejectionsExplainThemselves() {
        #expect(CookieRejection.blockedByDomainRule(domain: "ads.com").description.contains("ads.com"))
        #expect(
            CookieRejection.thirdParty(site: "t.net", mainDocumentSite: "n.org").description
                == "t.net is a third party to the main document's site n.org"
        )
    }

    // MARK: Limits

    @Test func perSiteLimitEvictsToThePurgeTarget() {
        var jar = CookieJar()
        var evicted: [CookieChange] = []
        for index in 0..<181 {
            let now = testNow.addingTimeInterval(Double(index))
            let subdomain = index.isMultiple(of: 2) ? "a" : "b"  // one site, several hosts
            if case .success(let changes) = jar.setCookie(
                "c\(index)=1; Domain=example.com",
                context: context("https://\(subdomain).example.com/"),
                now: now
            ) {
                evicted += changes.filter { if case .removed = $0 { return true } else { return false } }
            }
        }
        #expect(jar.count == 150)
        #expect(evicted.count == 31)
        // Least recently accessed went first.
        #expect(Set(evicted.map(\.cookie.name)) == Set((0..<31).map { "c\($0)" }))
        for change in evicted { #expect(change == .removed(change.cookie, cause: .evicted)) }
    }

    @Test func evictionTakesExpiredThenNonSecureThenLeastRecentlyAccessed() {
        var jar = CookieJar(limits: CookieJar.Limits(perSite: 4, perSitePurgedTo: 2))
        let site = "https://example.com/"
        jar.accept("oldSecure=1; Secure", from: site, now: testNow)
        jar.accept("expiring=1; Max-Age=5", from: site, now: testNow.addingTimeInterval(1))
        jar.accept("newPlain=1", from: site, now: testNow.addingTimeInterval(2))
        jar.accept("newSecure=1; Secure", from: site, now: testNow.addingTimeInterval(3))
        // The fifth cookie, 10 s later, pushes the site over its limit of 4.
        let result = jar.setCookie("latest=1; Secure", context: context(site), now: testNow.addingTimeInterval(10))
        guard case .success(let changes) = result else {
            Issue.record("\(result)")
            return
        }
        let removed = changes.compactMap { change -> String? in
            if case .removed(let cookie, let cause) = change { return "\(cookie.name):\(cause.rawValue)" }
            return nil
        }
        #expect(removed.sorted() == ["expiring:expired", "newPlain:evicted", "oldSecure:evicted"])
        #expect(Set(jar.allCookies.map(\.name)) == ["newSecure", "latest"])
    }

    @Test func totalLimitEvictsAcrossSites() {
        var jar = CookieJar(limits: CookieJar.Limits(total: 10, totalPurge: 4))
        for index in 0..<11 {
            jar.accept("c=\(index)", from: "https://site\(index).com/", now: testNow.addingTimeInterval(Double(index)))
        }
        #expect(jar.count == 6)
        #expect(Set(jar.allCookies.map(\.value)) == Set((5..<11).map(String.init)))
    }

    @Test func removalsReportTheirCause() {
        var jar = CookieJar()
        jar.accept("a=1", from: "http://example.com/")
        jar.accept("b=1", from: "http://other.com/")
        let identity = Cookie.Identity(name: "a", domain: "example.com", hostOnly: true, path: "/")
        #expect(jar.remove(identity)?.cookie.name == "a")
        #expect(jar.remove(identity) == nil)
        #expect(jar.removeAll { $0.domain == "other.com" }.count == 1)
        #expect(jar.count == 0)
    }
}
