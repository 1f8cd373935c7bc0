import Foundation
import Glibc
import KeyjarPlatform
import Testing

/// `ProgramLayout`: where Keyjar's programs look for one another, installed (`PREFIX/bin`,
/// `PREFIX/libexec/keyjar`) and in a build tree.
@Suite struct ProgramLayoutTests {
    @Test func fromBinTheHelpersDirectoryComesFirst() {
        #expect(
            ProgramLayout.directories(besideExecutable: "/home/u/.local/bin/keyjar")
                == ["/home/u/.local/libexec/keyjar", "/home/u/.local/bin"]
        )
        #expect(ProgramLayout.directories(besideExecutable: "/usr/bin/keyjar") == ["/usr/libexec/keyjar", "/usr/bin"])
        #expect(ProgramLayout.directories(besideExecutable: "/bin/keyjar") == ["/libexec/keyjar", "/bin"])
    }

    @Test func fromTheHelpersDirectoryBinComesSecond() {
        #expect(
            ProgramLayout.directories(besideExecutable: "/opt/keyjar/libexec/keyjar/keyjar-full")
                == ["/opt/keyjar/libexec/keyjar", "/opt/keyjar/bin"]
        )
    }

    /// A build tree, or any other directory: only the program's own. A directory merely ending
    /// in "bin" or "keyjar" is not a prefix's.
    @Test func elsewhereOnlyItsOwnDirectory() {
        for (executable, directory) in [
            ("/work/.build/debug/keyjar", "/work/.build/debug"),
            ("/opt/cabin/keyjar", "/opt/cabin"),
            ("/opt/keyjar/keyjar-full", "/opt/keyjar"),
            ("/keyjar", "/"),
        ] {
            #expect(ProgramLayout.directories(besideExecutable: executable) == [directory], "\(executable)")
        }
    }

    /// The running test binary is found, and what is looked for is named in the build tree's
    /// directory; a directory of the name is not a program.
    @Test func aProgramIsAnExecutableRegularFile() throws {
        let executable = try #require(ProgramLayout.runningExecutable)
        #expect(FileManager.default.isExecutableFile(atPath: executable))
        let name = (executable as NSString).lastPathComponent
        #expect(ProgramLayout.candidates(for: name).contains(executable))
        #expect(ProgramLayout.program(named: name) == executable)
        #expect(ProgramLayout.program(named: "no-such-program-\(getpid())") == nil)
        #expect(ProgramLayout.isExecutableFile(executable))
        #expect(!ProgramLayout.isExecutableFile(NSTemporaryDirectory()))
        #expect(!ProgramLayout.isExecutableFile("/etc/passwd"))
    }
}
