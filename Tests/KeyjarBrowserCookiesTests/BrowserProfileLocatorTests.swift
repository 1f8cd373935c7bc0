import Foundation
import KeyjarBrowserCookies
import KeyjarTestSupport
import Testing

@Suite struct BrowserProfileLocatorTests {
    @Test func firefoxDefaultIsTheInstallsThenTheMarkedProfile() throws {
        let home = try BrowserHome()
        let root = try home.firefoxRoot(
            ".mozilla/firefox",
            profiles: [("old", "x.old"), ("marked", "y.marked"), ("installed", "z.installed")],
            ini: "[Install1234]\nDefault=z.installed\n\n"
        )
        var ini = try String(contentsOfFile: root + "/profiles.ini", encoding: .utf8)
        ini = ini.replacingOccurrences(of: "Path=y.marked\n", with: "Path=y.marked\nDefault=1\n")
        try ini.write(toFile: root + "/profiles.ini", atomically: true, encoding: .utf8)
        #expect(try home.locator.profile(browser: .firefox, named: nil).name == "installed")

        // Without an [Install…] section, the profile marked Default=1.
        try ini.replacingOccurrences(of: "[Install1234]\nDefault=z.installed\n", with: "")
            .write(toFile: root + "/profiles.ini", atomically: true, encoding: .utf8)
        #expect(try home.locator.profile(browser: .firefox, named: nil).name == "marked")
        // By name, by directory, by path.
        #expect(try home.locator.profile(browser: .firefox, named: "old").directory == root + "/x.old")
        #expect(try home.locator.profile(browser: .firefox, named: "x.old").name == "old")
        try home.firefoxDatabase(in: root + "/x.old", [])
        #expect(try home.locator.profile(browser: .firefox, named: root + "/x.old").directory == root + "/x.old")

        let error = #expect(throws: BrowserCookieImportError.self) {
            try home.locator.profile(browser: .firefox, named: "nope")
        }
        #expect(error?.code == .profileNotFound)
        #expect(error?.message.contains("marked, installed") == true || error?.message.contains("installed") == true)
    }

    @Test(arguments: [
        ".config/mozilla/firefox", ".var/app/org.mozilla.firefox/.mozilla/firefox",
        ".var/app/org.mozilla.firefox/config/mozilla/firefox", "snap/firefox/common/.mozilla/firefox",
    ])
    func firefoxIsFoundInItsXDGFlatpakAndSnapHomes(root: String) throws {
        let home = try BrowserHome()
        _ = try home.firefoxRoot(root, profiles: [("default-release", "p.default-release")])
        let profile = try home.locator.profile(browser: .firefox, named: nil)
        #expect(profile.directory == home.home + "/" + root + "/p.default-release")
    }

    @Test(arguments: [
        (Browser.chrome, ".var/app/com.google.Chrome/config/google-chrome"),
        (.chromium, "snap/chromium/common/chromium"),
        (.brave, "snap/brave/current/.config/BraveSoftware/Brave-Browser"),
        (.brave, ".var/app/com.brave.Browser/config/BraveSoftware/Brave-Browser"),
        (.edge, ".config/microsoft-edge"),
        (.opera, ".var/app/com.opera.Opera/config/opera"),
        (.opera, "snap/opera/current/.config/opera"),
        (.vivaldi, "snap/vivaldi/current/.config/vivaldi"),
    ])
    func chromiumBrowsersAreFoundInTheirFlatpakAndSnapHomes(browser: Browser, root: String) throws {
        let home = try BrowserHome()
        try home.chromiumProfile(root + "/Default", [])
        #expect(try home.locator.profile(browser: browser, named: nil).directory == home.home + "/" + root + "/Default")
        #expect(home.locator.installedBrowsers() == [browser])
    }

    @Test func chromiumProfilesGoByDirectoryOrDisplayName() throws {
        let home = try BrowserHome()
        let root = home.home + "/.config/google-chrome"
        try home.chromiumProfile(".config/google-chrome/Default", [])
        // An older profile keeps its database beside the profile's files, not in Network/.
        try home.chromiumProfile(".config/google-chrome/Profile 1", network: false, [])
        try
            #"{"profile":{"last_used":"Profile 1","info_cache":{"Default":{"name":"Person 1"},"Profile 1":{"name":"Work"}}}}"#
            .write(toFile: root + "/Local State", atomically: true, encoding: .utf8)

        #expect(try home.locator.profile(browser: .chrome, named: nil).name == "Work")
        let work = try home.locator.profile(browser: .chrome, named: "Work")
        #expect(work.cookieDatabase == root + "/Profile 1/Cookies")
        #expect(
            try home.locator.profile(browser: .chrome, named: "Default").cookieDatabase == root
                + "/Default/Network/Cookies"
        )
        #expect(try home.locator.profile(browser: .chrome, named: "person 1").name == "Person 1")
        let error = #expect(throws: BrowserCookieImportError.self) {
            try home.locator.profile(browser: .chrome, named: "Home")
        }
        #expect(
            error?.message.contains("Person 1 (Default)") == true && error?.message.contains("Work (Profile 1)") == true
        )
    }

    @Test func aMissingBrowserNamesTheOnesThatAreThere() throws {
        let home = try BrowserHome()
        try home.chromiumProfile(".config/vivaldi/Default", [])
        let error = #expect(throws: BrowserCookieImportError.self) {
            try home.locator.profile(browser: .firefox, named: nil)
        }
        #expect(error?.code == .browserNotFound && error?.message.contains("found: vivaldi") == true)
    }
}
