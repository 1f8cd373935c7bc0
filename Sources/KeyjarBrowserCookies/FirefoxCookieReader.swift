public import FoundationEssentials
import KeyjarCodec
import KeyjarSQLite

/// Reads a Firefox profile's `cookies.sqlite` (table `moz_cookies`) through a private snapshot.
public struct FirefoxCookieReader: Sendable {
    /// The newest `PRAGMA user_version` this reader knows: 16 made `expiry` milliseconds.
    public static let newestSchema: Int64 = 16
    static let requiredColumns: Set<String> = [
        "name", "value", "host", "path", "expiry", "creationTime", "lastAccessed", "isSecure", "isHttpOnly",
        "originAttributes",
    ]

    public var profile: BrowserProfile
    /// A container's name (`--container`), nil for no container.
    public var container: String?
    /// Only the cookies of these domains and their subdomains (all when empty).
    public var domains: [String]

    public init(profile: BrowserProfile, container: String? = nil, domains: [String] = []) {
        self.profile = profile
        self.container = container
        self.domains = domains
    }

    /// The cookies a normal window (or the container's tabs) would send.
    public func read(now: Date = Date()) throws(BrowserCookieImportError) -> BrowserCookies {
        let userContextID =
            try container.map { name throws(BrowserCookieImportError) in try containerID(named: name) } ?? 0
        let path = profile.cookieDatabase
        let snapshot = try BrowserDatabaseSnapshot(of: path)
        do {
            let database = snapshot.connection
            let version = try database.integerPragma("user_version")
            guard version <= Self.newestSchema else {
                throw BrowserCookieImportError(
                    .unsupportedSchema,
                    "\(path) has Firefox cookie schema version \(version); this keyjar reads up to \(Self.newestSchema)."
                )
            }
            let columns = try database.columns(of: "moz_cookies")
            let missing = Self.requiredColumns.subtracting(columns).sorted()
            guard missing.isEmpty else {
                throw BrowserCookieImportError(
                    .unsupportedSchema,
                    "\(path) (Firefox cookie schema version \(version)) lacks moz_cookies column\(missing.count == 1 ? "" : "s") \(missing.joined(separator: ", "))."
                )
            }
            let sameSite = columns.contains("sameSite") ? "sameSite" : "0"
            let rawSameSite = columns.contains("rawSameSite") ? "rawSameSite" : "NULL"
            let statement = try database.statement(
                """
                SELECT name, value, host, path, expiry, creationTime, lastAccessed, isSecure, isHttpOnly,
                       \(sameSite), \(rawSameSite), originAttributes FROM moz_cookies
                """
            )
            var result = BrowserCookies()
            while try statement.step() {
                guard BrowserCookies.selects(host: statement.text(2), domains: domains) else { continue }
                let row = FirefoxCookieRow(
                    name: statement.text(0),
                    value: statement.text(1),
                    host: statement.text(2),
                    path: statement.text(3),
                    expiry: statement.int64(4),
                    expiryInMilliseconds: version >= 16,
                    creationTime: statement.int64(5),
                    lastAccessed: statement.int64(6),
                    isSecure: statement.bool(7),
                    isHttpOnly: statement.bool(8),
                    sameSite: statement.int64(9),
                    rawSameSite: statement.isNull(10) ? nil : statement.int64(10),
                    originAttributes: statement.text(11)
                )
                result.take(BrowserCookieRowDecoder.cookie(row, container: userContextID, now: now))
            }
            return result
        } catch let error as BrowserCookieImportError {
            throw error
        } catch {
            throw BrowserCookieImportError(.databaseCorrupt, "cannot read \(path): \(error).")
        }
    }

    /// The profile's containers (`containers.json`) by name: the user's names, and the
    /// built-in ones' English names (their `l10nID`).
    public func containers() -> [(name: String, userContextID: Int)] {
        guard let data = FileManager.default.contents(atPath: profile.directory + "/containers.json"),
            let identities = try? JSONReader.parse(Array(data))?.member("identities").elements(Self.identityMembers)
        else {
            // A profile that never opened the container settings has no file: the built-in four.
            return [("Personal", 1), ("Work", 2), ("Banking", 3), ("Shopping", 4)]
        }
        return identities.compactMap { identity in
            guard Self.isPublic(identity["public"]), let id = try? identity["userContextId"]?.decodeInt() else {
                return nil
            }
            if case .string(let name)? = identity["name"] { return (name, id) }
            let label = Self.string(identity["l10nID"]) ?? Self.string(identity["l10nId"]) ?? ""
            let builtIn = [
                "userContextPersonal.label": "Personal", "userContextWork.label": "Work",
                "userContextBanking.label": "Banking", "userContextShopping.label": "Shopping",
            ]
            return builtIn[label].map { ($0, id) }
        }
    }

    /// An identity's members by name: an identity that is no object makes the file unreadable.
    private static func identityMembers(_ json: JSONValue) throws(JSONShapeError) -> [String: JSONValue] {
        var members: [String: JSONValue] = [:]
        for (key, value) in try json.members() { members[key] = value }
        return members
    }

    /// A container's `public`: true unless false (or 0, which Foundation's reading took for
    /// false); a container without it, or with a value of another type, is shown.
    private static func isPublic(_ value: JSONValue?) -> Bool {
        switch value {
        case .bool(let flag)?: return flag
        case .number?: return value?.double != 0
        default: return true
        }
    }

    /// A member that is a string; nil when absent or of another type.
    private static func string(_ value: JSONValue?) -> String? {
        guard case .string(let text)? = value else { return nil }
        return text
    }

    private func containerID(named name: String) throws(BrowserCookieImportError) -> Int {
        let containers = containers()
        if let match = containers.first(where: { $0.name == name })
            ?? containers.first(where: { $0.name.lowercased() == name.lowercased() })
        {
            return match.userContextID
        }
        throw BrowserCookieImportError(
            .containerNotFound,
            "Firefox profile \(profile.name) has no container '\(name)'; its containers: "
                + (containers.isEmpty ? "none" : containers.map(\.name).joined(separator: ", ")) + "."
        )
    }
}
