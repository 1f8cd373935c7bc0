import Foundation
import KeyjarCodec
import KeyjarTestSupport
import Testing

/// netrc as curl's lib/netrc.c reads it, and the errors where curl would silently misread.
struct NetrcFileTests {
    /// A file with everything curl's grammar has: both entry kinds, every keyword in any case,
    /// quoted values with escapes, comments, a macro with a blank-line end, CRLF line ends.
    static let everything = """
        # personal machines
        machine example.com login alice password "s3cret with spaces"
        MACHINE Other.Example.org
            Login bob
            PASSWORD "quote\\"back\\\\slash\\ttab"
            account ignored-acct
        machine nopass.example login carol

        macdef init
        cd /pub
        # a comment line inside a macro neither ends it nor belongs to it
        machine inside.macro.example login mallory password never-read

        machine after.macro.example login dave password "" # trailing comment
        default login anonymous password "guest@"\r
        """

    @Test func readsEveryEntryAsCurlDoes() throws {
        let entries = try NetrcFile.parse(Self.everything)
        #expect(
            entries == [
                NetrcFile.Entry(host: .machine("example.com"), login: "alice", password: "s3cret with spaces", line: 2),
                NetrcFile.Entry(
                    host: .machine("Other.Example.org"),
                    login: "bob",
                    password: "quote\"back\\slash\ttab",
                    line: 3
                ),
                NetrcFile.Entry(host: .machine("nopass.example"), login: "carol", password: nil, line: 7),
                NetrcFile.Entry(host: .machine("after.macro.example"), login: "dave", password: "", line: 14),
                NetrcFile.Entry(host: .default, login: "anonymous", password: "guest@", line: 15),
            ]
        )
    }

    @Test func valuesMaySpanLinesAndKeywordsAreValuesAfterAKeyword() throws {
        // curl takes the word after a keyword as its value whatever it is, even on the next line.
        let entries = try NetrcFile.parse("machine\nexample.com login\n  machine password default\n")
        #expect(
            entries == [NetrcFile.Entry(host: .machine("example.com"), login: "machine", password: "default", line: 1)]
        )
    }

    @Test func aMacroRunsToAnEmptyLineOnlyAndEndsTheEntry() throws {
        // A line of blanks does not end a macro (curl needs \n\n); a macro to the end is fine.
        let entries = try NetrcFile.parse("machine a login x\nmacdef m\n  \nmachine b login y\n\nmachine c login z\n")
        #expect(entries.map(\.host) == [.machine("a"), .machine("c")])
        let open = try NetrcFile.parse("machine a login x\nmacdef m\nmachine b\n")
        #expect(open.map(\.host) == [.machine("a")])
        // A login after a macro belongs to no entry.
        #expect(throws: NetrcFile.ParseError(line: 4, reason: .outsideEntry(keyword: "login"))) {
            try NetrcFile.parse("machine a\nmacdef m\n\nlogin x\n")
        }
    }

    @Test func aByteOrderMarkAndAnEmptyFileAreFine() throws {
        #expect(try NetrcFile.parse("\u{FEFF}machine a login b password c").count == 1)
        #expect(try NetrcFile.parse("").isEmpty)
        #expect(try NetrcFile.parse("# only a comment\n\n   \n").isEmpty)
    }

    struct Malformed: Sendable, CustomTestStringConvertible {
        let name: String
        let text: String
        let error: NetrcFile.ParseError
        var testDescription: String { name }
    }

    static let malformed: [Malformed] = [
        Malformed(
            name: "unterminated quote",
            text: "machine a\nlogin b password \"open secret\n",
            error: .init(line: 2, reason: .unterminatedQuote)
        ),
        Malformed(
            name: "value with a space, unquoted",
            text: "machine a login b password two words\n",
            error: .init(line: 1, reason: .unexpectedWord)
        ),
        Malformed(
            name: "login before any machine",
            text: "\nlogin b password c\n",
            error: .init(line: 2, reason: .outsideEntry(keyword: "login"))
        ),
        Malformed(
            name: "password at the end without value",
            text: "machine a login b\npassword",
            error: .init(line: 2, reason: .missingValue(keyword: "password"))
        ),
        Malformed(
            name: "machine at the end without name",
            text: "machine",
            error: .init(line: 1, reason: .missingValue(keyword: "machine"))
        ),
        Malformed(
            name: "NUL",
            text: "machine a login b\npassword c\u{0}d\n",
            error: .init(line: 2, reason: .nulCharacter)
        ),
    ]

    @Test(arguments: malformed)
    func malformedFilesSayWhichLineAndNeverTheValue(_ case: Malformed) {
        #expect(throws: `case`.error) { try NetrcFile.parse(`case`.text) }
        do {
            _ = try NetrcFile.parse(`case`.text)
        } catch {
            for secret in ["open secret", "two", "words", "c\u{0}d"] {
                #expect(!error.description.contains(secret))
            }
            #expect(error.description.hasPrefix("line \(`case`.error.line): "))
        }
    }

    @Test func descriptionsHideThePassword() throws {
        let entry = try #require(try NetrcFile.parse("machine a login b password hunter2").first)
        #expect(!entry.description.contains("hunter2"))
        #expect(!"\(entry)".contains("hunter2"))
        #expect(!String(reflecting: entry).contains("hunter2"))
    }

    /// Mutated files never crash the parser; what it returns is consistent.
    @Test(arguments: 0..<2)
    func mutatedFilesNeverCrash(seed: UInt64) {
        var random = SplitMix64(state: seed)
        for _ in 0..<2_000 {
            let text = Mutation.mutate(Self.everything, using: &random)
            do {
                let entries = try NetrcFile.parse(text)
                let lines = text.utf8.count { $0 == UInt8(ascii: "\n") } + 1
                #expect(entries.allSatisfy { $0.line >= 1 && $0.line <= lines })
                #expect(zip(entries, entries.dropFirst()).allSatisfy { $0.line <= $1.line })
            } catch {
                #expect(error.line >= 1)
            }
        }
    }
}
