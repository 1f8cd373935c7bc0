import Foundation
import KeyjarTestSupport
import Testing

/// `keyjar cookie` with partitioned cookies (CHIPS): set and read under a top-level site
/// (--main-document), listed with their key, kept by a restart and by the JSON file, left out of
/// cookies.txt with a count.
@Suite(.timeLimit(hangLimit), .servicesStopCleanly)
struct PartitionedCookieCommandTests {
    static let chat = "https://chat.example/widget"

    /// A Cookie header's pairs, in whatever order the header has them.
    static func pairs(_ header: String) -> Set<String> {
        Set(header.trimmingCharacters(in: .newlines).split(separator: "; ").map(String.init))
    }

    @Test func aPartitionedCookieIsSetListedAndSentUnderItsSiteOnlyAndSurvivesARestart() async throws {
        let daemon = try await DaemonProcess()
        let keyjar = KeyjarCLI(daemon: daemon)
        // Given the same embedded service's cookie under two top-level sites, and an ordinary one
        for (value, site) in [("1", "https://news.example/"), ("2", "https://shop.example/")] {
            try await keyjar.ok(
                "cookie",
                "set",
                "--url",
                Self.chat,
                "--main-document",
                site,
                "id=\(value); Secure; SameSite=None; Partitioned; Max-Age=3600"
            )
        }
        try await keyjar.ok("cookie", "set", "--url", Self.chat, "plain=1; Secure; SameSite=None; Max-Age=3600")
        // Then get sends each only under its site
        #expect(
            Self.pairs(try await keyjar.ok("cookie", "get", Self.chat, "--main-document", "https://news.example/a"))
                == ["plain=1", "id=1"]
        )
        #expect(
            Self.pairs(try await keyjar.ok("cookie", "get", Self.chat, "--main-document", "https://www.shop.example/"))
                == ["plain=1", "id=2"]
        )
        #expect(Self.pairs(try await keyjar.ok("cookie", "get", Self.chat)) == ["plain=1"])
        // ...list shows the key, and --partition picks a partition (or none)
        let lines = try await keyjar("cookie", "list").lines
        #expect(lines.filter { $0.hasSuffix("partitioned=https://news.example") }.count == 1)
        #expect(lines.filter { $0.hasSuffix("partitioned=https://shop.example") }.count == 1)
        #expect(
            try await keyjar("cookie", "list", "--partition", "https://shop.example").lines.map { $0.prefix(5) } == [
                "id=2;"
            ]
        )
        #expect(try await keyjar("cookie", "list", "--partition", "none").lines.map { $0.prefix(8) } == ["plain=1;"])
        let badPartition = try await keyjar("cookie", "list", "--partition", "shop.example")
        // A usage error (status 2) that names the option.
        #expect(badPartition.status == 2 && badPartition.error.contains("--partition"))
        // When keyjard restarts, the partitions are still apart
        #expect(await daemon.stop() == 0)
        let restarted = try await daemon.restarted()
        let again = KeyjarCLI(daemon: restarted)
        #expect(
            Self.pairs(try await again.ok("cookie", "get", Self.chat, "--main-document", "https://news.example/")) == [
                "plain=1", "id=1",
            ]
        )
        #expect(Self.pairs(try await again.ok("cookie", "get", Self.chat)) == ["plain=1"])
        // ...and delete --partition takes one partition's cookie only
        try await again.ok(
            "cookie",
            "delete",
            "--domain",
            "chat.example",
            "--name",
            "id",
            "--partition",
            "https://news.example"
        )
        #expect(
            Self.pairs(try await again.ok("cookie", "get", Self.chat, "--main-document", "https://news.example/")) == [
                "plain=1"
            ]
        )
        #expect(
            Self.pairs(try await again.ok("cookie", "get", Self.chat, "--main-document", "https://shop.example/")) == [
                "plain=1", "id=2",
            ]
        )
    }

    @Test func cookiesTxtLeavesPartitionedCookiesOutAndSaysSoWhileJSONKeepsThem() async throws {
        let first = try await DaemonProcess()
        let second = try await DaemonProcess()
        let (from, to) = (KeyjarCLI(daemon: first), KeyjarCLI(daemon: second))
        try await from.ok(
            "cookie",
            "set",
            "--url",
            Self.chat,
            "--main-document",
            "https://news.example/",
            "id=1; Secure; SameSite=None; Partitioned"
        )
        try await from.ok("cookie", "set", "--url", Self.chat, "plain=1; Secure; SameSite=None")
        // cookies.txt: the ordinary cookie only, and standard error counts the other
        let netscape = try await from("cookie", "export", "--format", "netscape")
        #expect(netscape.status == 0)
        #expect(netscape.output.contains("\tplain\t1"))
        #expect(!netscape.output.contains("\tid\t1"))
        #expect(netscape.error.contains("left out 1 partitioned cookie"))
        // JSON: both, and an import elsewhere keeps the partition
        let json = try await from.ok("cookie", "export", "--format", "json")
        #expect(
            json.contains("\"partitionKey\" : \"https:\\/\\/news.example\"")
                || json.contains("\"partitionKey\" : \"https://news.example\"")
        )
        let imported = try await to.run(["cookie", "import", "--format", "json", "-"], input: json)
        #expect(imported.status == 0)
        #expect(
            Self.pairs(try await to.ok("cookie", "get", Self.chat, "--main-document", "https://news.example/")) == [
                "plain=1", "id=1",
            ]
        )
        #expect(Self.pairs(try await to.ok("cookie", "get", Self.chat)) == ["plain=1"])
    }
}
