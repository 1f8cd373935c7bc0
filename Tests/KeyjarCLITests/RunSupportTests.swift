import ArgumentParser
import KeyjarCommands
import KeyjarCore
import Testing

/// `keyjar run`'s pure parts: its `--env` values and the mask over the command's output.
struct RunSupportTests {
    @Test func environmentCredentialsAreRead() throws {
        let plain = try EnvironmentCredential(parsing: "GITHUB_TOKEN=https://api.github.com/user")
        #expect(plain.name == "GITHUB_TOKEN" && plain.user == nil)
        #expect(plain.space.host == "api.github.com" && plain.space.port == 443 && plain.space.protocol == "https")
        let named = try EnvironmentCredential(parsing: "NPM=http://registry.local:4873#ci%40corp")
        #expect(named.user == "ci@corp" && named.space.port == 4873 && named.space.protocol == "http")
        let inURL = try EnvironmentCredential(parsing: "_X1=https://alice@example.com")
        #expect(inURL.user == "alice" && inURL.name == "_X1")
        for refused in [
            "NOEQUALS", "=https://a.example", "1X=https://a.example", "A-B=https://a.example",
            "X=https://a.example#", "X=https://a.example#%zz", "X=not a url", "X=https://u:p@a.example",
        ] {
            #expect(throws: ValidationError.self, "\(refused)") { try EnvironmentCredential(parsing: refused) }
        }
        // A '#' inside a password: nothing of it is repeated.
        #expect {
            try EnvironmentCredential(parsing: "X=https://u:p#ss@a.example")
        } throws: { error in
            !"\(error)".contains("u:p") && !"\(error)".contains("ss@")
        }
    }

    private func masked(_ chunks: [String], secrets: [String]) -> String {
        var mask = SecretMask(secrets: secrets)
        var output: [UInt8] = []
        for chunk in chunks { output += mask.filter(Array(chunk.utf8)) }
        output += mask.finish()
        return String(decoding: output, as: UTF8.self)
    }

    @Test func theMaskReplacesEveryValueWhereverTheReadsSplitIt() {
        #expect(masked(["a secret b secret"], secrets: ["secret"]) == "a *** b ***")
        #expect(masked(["a sec", "ret b"], secrets: ["secret"]) == "a *** b")
        #expect(masked(["s", "e", "c", "r", "e", "t"], secrets: ["secret"]) == "***")
        // An end that began a value but did not finish it comes out as it was.
        #expect(masked(["a sec", "tor"], secrets: ["secret"]) == "a sector")
        #expect(masked(["ends with sec"], secrets: ["secret"]) == "ends with sec")
        // A value that begins a longer one: the longer one whole, never its tail.
        #expect(masked(["abc", "def!"], secrets: ["abc", "abcdef"]) == "***!")
        #expect(masked(["abc", "!"], secrets: ["abc", "abcdef"]) == "***!")
        // Overlapping values leave nothing of either; a run of masked bytes is one ***.
        #expect(masked(["abcabc"], secrets: ["abc"]) == "***")
        #expect(masked(["abcdefgh!"], secrets: ["abc", "cdefgh"]) == "***!")
        #expect(masked(["xaabaabaa."], secrets: ["aabaa"]) == "x***.")
        #expect(masked(["ab", "c", "de"], secrets: ["abc", "cdx"]) == "***de")
        #expect(masked(["nothing here"], secrets: []) == "nothing here")
        #expect(masked(["x"], secrets: [""]) == "x")
        #expect(masked(["pässwörd ok"], secrets: ["pässwörd"]) == "*** ok")
    }

    /// Every split of a text with values in it masks as the unsplit text does.
    @Test func everySplitMasksAlike() {
        let text = "token=t0k3n; t0k; again t0k3nt0k3n and t0"
        let secrets = ["t0k3n", "t0k3nt0"]
        let whole = masked([text], secrets: secrets)
        #expect(!whole.contains("t0k3n"))
        let bytes = Array(text.utf8)
        for first in 1..<bytes.count {
            for second in first..<bytes.count {
                let chunks = [bytes[..<first], bytes[first..<second], bytes[second...]].map {
                    String(decoding: $0, as: UTF8.self)
                }
                #expect(masked(chunks, secrets: secrets) == whole, "split at \(first), \(second)")
            }
        }
    }
}
