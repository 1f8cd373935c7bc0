import FoundationEssentials
import KeyjarCodec
import KeyjarCore
import Testing

/// Cookies as pass entries (`keyjar sync --cookies`): every field of the storage model, the
/// value where pass keeps a secret, and one path per cookie.
struct PassCookieEntryTests {
    @Test func everyFieldIsWrittenAndReadBack() throws {
        let cookie = Cookie(
            name: "__Host-sid",
            value: "v=1 2",
            domain: "chat.example.com",
            hostOnly: true,
            path: "/app ",
            expires: Date(timeIntervalSince1970: 1_764_547_200.5),
            secure: true,
            httpOnly: true,
            sameSite: .strict,
            creation: Date(timeIntervalSince1970: 1_764_493_923.25),
            partitionKey: CookiePartitionKey(serialized: "https://news.example")
        )
        let entry = PassCookieEntry(cookie: cookie, modified: 1_764_493_924, otherLines: ["a note"])
        let text = try entry.encoded()
        // A path may end in a space: nothing but the one after the colon is trimmed.
        #expect(
            text.split(separator: "\n", omittingEmptySubsequences: false) == [
                "v=1 2", "cookie: __Host-sid", "domain: chat.example.com", "host-only: yes", "path: /app ",
                "expires: 2025-12-01T00:00:00.500Z", "secure: yes", "http-only: yes", "same-site: strict",
                "partition: https://news.example", "created: 2025-11-30T09:12:03.250Z",
                "modified: 2025-11-30T09:12:04.000Z", "a note", "",
            ]
        )
        let read = try PassCookieEntry.read(text)
        #expect(read.cookie.identity == cookie.identity)
        #expect(read.holdsTheSame(as: entry))
        #expect(read.cookie.creation == cookie.creation && read.modified == entry.modified)
        #expect(read.otherLines == ["a note"])
        #expect(try read.encoded() == text)
        #expect(!"\(entry)".contains("v=1"))
    }

    @Test func aSessionCookieHasNoExpiryAndDefaultsAreLeftOut() throws {
        let text = try PassCookieEntry(cookie: Cookie(name: "pref", value: "dark", domain: "example.com")).encoded()
        let lines = text.split(separator: "\n")
        #expect(lines.prefix(4) == ["dark", "cookie: pref", "domain: example.com", "path: /"])
        #expect(!text.contains("expires") && !text.contains("secure") && !text.contains("same-site"))
        #expect(try PassCookieEntry.read(text).cookie.isSession)
    }

    @Test func whatCannotBeACookieIsRefusedByName() {
        #expect(throws: PassEntry.FormatError.self) { try PassCookieEntry.read("v\ndomain: example.com\n") }
        #expect(throws: PassEntry.FormatError.self) { try PassCookieEntry.read("v\ncookie: a\n") }
        #expect(throws: PassEntry.FormatError.self) {
            try PassCookieEntry.read("v\ncookie: a\ndomain: example.com\nsecure: maybe\n")
        }
        #expect(throws: PassEntry.FormatError.self) {
            try PassCookieEntry.read("v\ncookie: a\ndomain: example.com\npartition: example.com\n")
        }
        do {
            _ = try PassCookieEntry.read("secret-value\ncookie: a\ndomain: example.com\nexpires: soon\n")
            Issue.record("an expiry that is no time was read")
        } catch {
            #expect(error.description == "the cookie's expiry is not a time (2026-12-01T00:00:00Z)")
        }
    }

    /// Each identity its own path: a nameless cookie, a name like the qualifiers, a path, host
    /// only and partitioned all differ.
    @Test func eachCookieHasAPathOfItsOwn() {
        let key = CookiePartitionKey(serialized: "https://news.example")
        let identities = [
            Cookie.Identity(name: "sid", domain: "example.com", hostOnly: false, path: "/"),
            Cookie.Identity(name: "sid", domain: "example.com", hostOnly: true, path: "/"),
            Cookie.Identity(name: "sid", domain: "example.com", hostOnly: false, path: "/app"),
            Cookie.Identity(name: "sid", domain: "example.com", hostOnly: false, path: "/", partitionKey: key),
            Cookie.Identity(name: "", domain: "example.com", hostOnly: false, path: "/"),
            Cookie.Identity(name: "(no name)", domain: "example.com", hostOnly: false, path: "/"),
            Cookie.Identity(name: "sid (host only)", domain: "example.com", hostOnly: false, path: "/"),
            Cookie.Identity(name: "sid", domain: "www.example.com", hostOnly: false, path: "/"),
        ]
        let paths = identities.map(PassCookieEntry.path(of:))
        #expect(Set(paths).count == identities.count, "\(paths)")
        #expect(paths[0] == "keyjar-cookies/example.com/sid")
        #expect(paths[3] == "keyjar-cookies/example.com/sid (partition https:%2F%2Fnews.example)")
        #expect(paths.allSatisfy { $0.split(separator: "/").count == 3 })
    }
}
