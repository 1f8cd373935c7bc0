import Foundation
import Glibc
import KeyjarPlatform
import Testing

/// `PathName` stands in for `NSString`'s path methods in the modules the `keyjar` front links
/// (FoundationEssentials has no `NSString`): it must answer as Foundation does.
@Suite struct PathNameTests {
    // Not bare one-character names ("a", "a/", ".", "~"): Foundation on Linux traps on those.
    static let paths = [
        "/", "/a", "/a/", "/a/b", "/a/b/", "/a//b", "/a//b//", "a/b", "a/b/c", "", "..", "./x", "../x",
        "/tmp/keyjar-1000/keyjar.sock", "/proc/self/exe", "~/x", "x/~", "/a/b/../c",
    ]

    @Test(arguments: paths)
    func directoryIsFoundationsDeletingLastPathComponent(path: String) {
        #expect(PathName.directory(of: path) == (path as NSString).deletingLastPathComponent)
    }

    /// Where Foundation on Linux gives "" for the root written twice, or traps (a bare
    /// one-character name): the root's directory is the root, a bare name has none.
    @Test func theRootsDirectoryIsTheRootAndABareNameHasNone() {
        #expect(PathName.directory(of: "//") == "/")
        #expect(PathName.directory(of: "/") == "/")
        for name in ["a", "a/", ".", "~", "~/", "name", "name//"] {
            #expect(PathName.directory(of: name) == "", "\(name)")
        }
    }

    @Test(arguments: ["/", "/a", "/a/", "a", "a/", "", "/tmp/dir"])
    func appendingIsFoundationsAppendingPathComponent(directory: String) {
        for component in ["b", "b/c", "out.txt", "b/"] {
            let expected = (directory as NSString).appendingPathComponent(component)
            #expect(PathName.appending(component, to: directory) == expected, "\(directory) + \(component)")
        }
    }

    @Test func anotherUsersTildeAndAnythingElseAreAsFoundationHasThem() throws {
        let root = try #require(getpwuid(0)).pointee
        let rootName = String(cString: try #require(root.pw_name))
        for path in [
            "~\(rootName)", "~\(rootName)/x", "~\(rootName)/x/", "~no-such-user-for-keyjar/x", "/a/~/b", "a~", "",
        ] {
            #expect(PathName.expandingTilde(path) == (path as NSString).expandingTildeInPath, "\(path)")
        }
    }

    /// The user's own `~` is `$HOME`, as a shell has it (Foundation on Linux reads the password
    /// database instead).
    @Test func theUsersOwnTildeIsHOME() throws {
        let home = try #require(ProcessInfo.processInfo.environment["HOME"])
        #expect(PathName.expandingTilde("~") == home)
        #expect(PathName.expandingTilde("~/") == home)
        #expect(PathName.expandingTilde("~/out.txt") == home + "/out.txt")
        #expect(PathName.expandingTilde("~/a/b/") == home + "/a/b")
    }
}
