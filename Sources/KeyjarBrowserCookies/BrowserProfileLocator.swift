import Foundation
import KeyjarCodec
import KeyjarPlatform

/// A browser Keyjar can read cookies from.
public enum Browser: String, Sendable, Hashable, CaseIterable {
    case firefox, chrome, chromium, brave, edge, vivaldi, opera

    /// Accepts the names people and packages use: `google-chrome`, `microsoft-edge`, any case.
    public init?(name: String) {
        switch name.lowercased() {
        case "google-chrome", "chrome": self = .chrome
        case "microsoft-edge", "edge": self = .edge
        case "brave-browser", "brave": self = .brave
        default:
            guard let browser = Browser(rawValue: name.lowercased()) else { return nil }
            self = browser
        }
    }

    public var isChromium: Bool { self != .firefox }

    /// The `application` attribute under which this browser keeps its Safe Storage password in
    /// the Secret Service.
    public var secretServiceApplication: String {
        switch self {
        case .chrome: "chrome"
        case .edge: "microsoft-edge"
        default: rawValue
        }
    }
}

/// Where the browsers' files are: the home directory and `XDG_CONFIG_HOME` (nil: ~/.config).
/// Given, not read from the process, so that a test can point it at a home of its own.
public struct BrowserEnvironment: Sendable, Hashable {
    public var home: String
    public var configHome: String?

    public init(home: String, configHome: String? = nil) {
        self.home = home
        self.configHome = configHome
    }

    /// `HOME` (else the password database's) and `XDG_CONFIG_HOME` of this process.
    public static func current() -> BrowserEnvironment {
        let directories = XDGDirectories()
        return BrowserEnvironment(home: directories.home, configHome: directories.directory("XDG_CONFIG_HOME"))
    }

    var config: String { configHome ?? home + "/.config" }
}

/// One browser profile: where its cookie database is and what to call it.
public struct BrowserProfile: Sendable, Hashable {
    public var browser: Browser
    /// The name the browser shows (Firefox's `Name=`, Chromium's display name), else the
    /// directory's name.
    public var name: String
    /// The profile's directory (Chromium's `Default`, `Profile 1`, …; Firefox's `xyz.default-release`).
    public var directory: String

    public init(browser: Browser, name: String, directory: String) {
        self.browser = browser
        self.name = name
        self.directory = directory
    }

    /// The cookie database: Firefox's `cookies.sqlite`; Chromium's `Network/Cookies` (since
    /// Chromium 96) else `Cookies`.
    public var cookieDatabase: String {
        if browser == .firefox { return directory + "/cookies.sqlite" }
        let network = directory + "/Network/Cookies"
        return FileManager.default.fileExists(atPath: network) ? network : directory + "/Cookies"
    }
}

/// Finds browsers' profiles in their native, Flatpak and Snap locations.
///
/// ```swift
/// let locator = BrowserProfileLocator(environment: .current())
/// let profile = try locator.profile(browser: .firefox, named: nil)   // the default profile
/// ```
public struct BrowserProfileLocator: Sendable {
    public var environment: BrowserEnvironment

    public init(environment: BrowserEnvironment) {
        self.environment = environment
    }

    /// The directories a browser's profiles may live in, in the order they are preferred: the
    /// native one first, then Flatpak's, then Snap's.
    public func candidateRoots(of browser: Browser) -> [String] {
        let home = environment.home
        let config = environment.config
        switch browser {
        case .firefox:
            // Firefox 147 moved to XDG_CONFIG_HOME; older profiles stay in ~/.mozilla.
            return [
                config + "/mozilla/firefox",
                home + "/.mozilla/firefox",
                home + "/.var/app/org.mozilla.firefox/config/mozilla/firefox",
                home + "/.var/app/org.mozilla.firefox/.mozilla/firefox",
                home + "/snap/firefox/common/.mozilla/firefox",
            ]
        case .chrome: return chromiumRoots("google-chrome", flatpak: "com.google.Chrome")
        case .chromium:
            return chromiumRoots("chromium", flatpak: "org.chromium.Chromium") + [
                home + "/snap/chromium/common/chromium"
            ]
        case .brave:
            return chromiumRoots("BraveSoftware/Brave-Browser", flatpak: "com.brave.Browser") + [
                home + "/snap/brave/current/.config/BraveSoftware/Brave-Browser"
            ]
        case .edge: return chromiumRoots("microsoft-edge", flatpak: "com.microsoft.Edge")
        // A snap's HOME is ~/snap/NAME/current: its XDG config directory is under it.
        case .vivaldi:
            return chromiumRoots("vivaldi", flatpak: "com.vivaldi.Vivaldi") + [
                home + "/snap/vivaldi/current/.config/vivaldi"
            ]
        case .opera:
            return chromiumRoots("opera", flatpak: "com.opera.Opera") + [home + "/snap/opera/current/.config/opera"]
        }
    }

    private func chromiumRoots(_ directory: String, flatpak: String) -> [String] {
        [environment.config + "/" + directory, environment.home + "/.var/app/\(flatpak)/config/\(directory)"]
    }

    /// The browsers that have at least one profile here.
    public func installedBrowsers() -> [Browser] {
        Browser.allCases.filter { !profiles(of: $0).isEmpty }
    }

    /// Every profile of `browser`, the default first.
    public func profiles(of browser: Browser) -> [BrowserProfile] {
        var found: [BrowserProfile] = []
        for root in candidateRoots(of: browser) where isDirectory(root) {
            let profiles = browser == .firefox ? firefoxProfiles(in: root) : chromiumProfiles(in: root, browser)
            found += profiles.filter { !found.map(\.directory).contains($0.directory) }
        }
        return found
    }

    /// `name` (a profile's name, directory name or path), else the default profile.
    /// - Throws: `.browserNotFound` naming the browsers that are there, `.profileNotFound`
    ///   naming the browser's profiles.
    public func profile(browser: Browser, named name: String?) throws(BrowserCookieImportError) -> BrowserProfile {
        if let name, name.contains("/") {
            // A path: the profile directory itself, wherever it is.
            let path = URL(fileURLWithPath: (name as NSString).expandingTildeInPath).standardizedFileURL.path
            let profile = BrowserProfile(browser: browser, name: (path as NSString).lastPathComponent, directory: path)
            guard FileManager.default.fileExists(atPath: profile.cookieDatabase) else {
                throw BrowserCookieImportError(
                    .profileNotFound,
                    "\(path) is not a \(browser.rawValue) profile: it has no \((profile.cookieDatabase as NSString).lastPathComponent)."
                )
            }
            return profile
        }
        let profiles = profiles(of: browser)
        guard !profiles.isEmpty else {
            let others = installedBrowsers().map(\.rawValue)
            throw BrowserCookieImportError(
                .browserNotFound,
                "no \(browser.rawValue) profile found (looked in \(candidateRoots(of: browser).joined(separator: ", "))); "
                    + (others.isEmpty
                        ? "no supported browser has a profile here." : "found: \(others.joined(separator: ", ")).")
            )
        }
        guard let name else { return profiles[0] }
        let directoryName = { (profile: BrowserProfile) in (profile.directory as NSString).lastPathComponent }
        if let match = profiles.first(where: { $0.name == name || directoryName($0) == name })
            ?? profiles.first(where: {
                $0.name.lowercased() == name.lowercased() || directoryName($0).lowercased() == name.lowercased()
            })
        {
            return match
        }
        throw BrowserCookieImportError(
            .profileNotFound,
            "\(browser.rawValue) has no profile '\(name)'; its profiles: "
                + profiles.map { $0.name == directoryName($0) ? $0.name : "\($0.name) (\(directoryName($0)))" }
                .joined(separator: ", ") + "."
        )
    }

    // MARK: Firefox

    /// The profiles `profiles.ini` lists whose directory exists; the install's default (an
    /// `[Install…]` section's `Default=`) first, else the one marked `Default=1`.
    func firefoxProfiles(in root: String) -> [BrowserProfile] {
        guard let text = try? String(contentsOfFile: root + "/profiles.ini", encoding: .utf8) else { return [] }
        let sections = Self.iniSections(text)
        var profiles: [BrowserProfile] = []
        var marked: String?
        for (name, values) in sections where name.hasPrefix("Profile") {
            guard let path = values["Path"] else { continue }
            let relative = values["IsRelative"].map { $0 != "0" } ?? !path.hasPrefix("/")
            let directory = relative ? root + "/" + path : path
            guard isDirectory(directory) else { continue }
            profiles.append(BrowserProfile(browser: .firefox, name: values["Name"] ?? path, directory: directory))
            if values["Default"] == "1" { marked = directory }
        }
        let installDefault = sections.first { $0.name.hasPrefix("Install") && $0.values["Default"] != nil }
            .flatMap { $0.values["Default"] }
            .map { $0.hasPrefix("/") ? $0 : root + "/" + $0 }
        for preferred in [marked, installDefault].compactMap(\.self) {
            if let index = profiles.firstIndex(where: { $0.directory == preferred }) {
                profiles.insert(profiles.remove(at: index), at: 0)
            }
        }
        return profiles
    }

    /// An INI file's sections in order, each with its `key=value` lines.
    static func iniSections(_ text: String) -> [(name: String, values: [String: String])] {
        var sections: [(name: String, values: [String: String])] = []
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("["), line.hasSuffix("]") {
                sections.append((String(line.dropFirst().dropLast()), [:]))
            } else if let equals = line.firstIndex(of: "="), !sections.isEmpty, !line.hasPrefix(";"),
                !line.hasPrefix("#")
            {
                sections[sections.count - 1].values[String(line[..<equals])] = String(
                    line[line.index(after: equals)...]
                )
            }
        }
        return sections
    }

    // MARK: Chromium

    /// Directories with a cookie database, named as `Local State` names them; the last used
    /// profile first, else `Default`. Opera keeps its one profile in the root itself.
    func chromiumProfiles(in root: String, _ browser: Browser) -> [BrowserProfile] {
        var names: [String: String] = [:]
        var lastUsed: String?
        if let data = FileManager.default.contents(atPath: root + "/Local State"),
            let profile = try? JSONReader.parse(Array(data))?.member("profile"),
            case .object = profile
        {
            // A member absent or of another type is passed over: the profiles keep their directories' names.
            lastUsed = try? profile.member("last_used").decodeString()
            for (directory, info) in (try? profile.member("info_cache").members()) ?? [] {
                if let name = try? info.member("name").decodeString() { names[directory] = name }
            }
        }
        let hasCookies = { (directory: String) in
            FileManager.default.fileExists(atPath: directory + "/Network/Cookies")
                || FileManager.default.fileExists(atPath: directory + "/Cookies")
        }
        var profiles: [BrowserProfile] = []
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []).sorted()
        for entry in entries where hasCookies(root + "/" + entry) {
            profiles.append(
                BrowserProfile(browser: browser, name: names[entry] ?? entry, directory: root + "/" + entry)
            )
        }
        if profiles.isEmpty, hasCookies(root) {
            profiles.append(BrowserProfile(browser: browser, name: "Default", directory: root))
        }
        for preferred in ["Default", lastUsed].compactMap(\.self) {
            if let index = profiles.firstIndex(where: { ($0.directory as NSString).lastPathComponent == preferred }) {
                profiles.insert(profiles.remove(at: index), at: 0)
            }
        }
        return profiles
    }

    private func isDirectory(_ path: String) -> Bool {
        var directory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &directory) && directory.boolValue
    }
}
