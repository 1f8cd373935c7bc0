import Foundation
import KeyjarCodec
import KeyjarCore

/// The sites whose cookies `keyjar sync` keeps in the store: `.keyjar-cookies` at the store's
/// top, one domain per line, committed with the entries, so that naming a site on one machine
/// names it on all (the list comes with the merge that brings its cookies). git merges the file
/// as a union (`.gitattributes`): two machines naming sites at once keep both. The names of the
/// sites are not encrypted; their cookies are.
struct CookieSites {
    let store: PassStore

    static let file = ".keyjar-cookies"
    private static let attributes = "\(file) merge=union"

    private var path: String { (store.directory as NSString).appendingPathComponent(Self.file) }

    /// The sites named, canonical, each once, in the order named.
    func read() -> [String] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
        var sites: [String] = []
        for line in text.split(whereSeparator: \.isNewline) {
            let domain = Host.canonicalDomain(String(line.split(separator: "#").first ?? "").trimmingWhitespace())
            if !domain.isEmpty, !sites.contains(domain) { sites.append(domain) }
        }
        return sites
    }

    /// A domain as the user typed it, checked: a host name that is not a public suffix (`com`
    /// would send every .com site's cookies to the store).
    static func site(_ typed: String) throws(SyncSkip) -> String {
        let domain = Host.canonicalDomain(typed)
        guard !domain.isEmpty, domain.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }),
            !domain.hasPrefix("."), !domain.hasSuffix(".")
        else {
            throw SyncSkip(description: "\(typed) is not a domain (github.com, an ASCII host name)")
        }
        if PublicSuffixList.system.isListedSuffix(domain) == true {
            throw SyncSkip(description: "\(typed) is a public suffix: name a site under it (example.\(domain))")
        }
        return domain
    }

    /// Adds and removes sites, and commits the list with the store's other changes. The
    /// entries of a site no longer named are removed from the store (each machine keeps its
    /// own cookies).
    func change(adding: [String], removing: [String]) throws {
        var sites = read()
        for site in adding where !sites.contains(site) { sites.append(site) }
        sites.removeAll { removing.contains($0) }
        let text = sites.isEmpty ? "" : sites.joined(separator: "\n") + "\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        try markUnion()
        _ = try removeUnnamedEntries(sites: sites, among: try store.entries())
        var message = "keyjar sync: cookies"
        if !adding.isEmpty { message += " of \(adding.joined(separator: ", ")) synced" }
        if !removing.isEmpty {
            message += "\(adding.isEmpty ? "" : ";") of \(removing.joined(separator: ", ")) no longer"
        }
        try store.commitAll(message)
    }

    /// Removes the cookie entries of sites not named (a site dropped on another machine while
    /// this one changed its cookies) among the store's committed entries: their paths.
    func removeUnnamedEntries(sites: [String], among committed: [String: String]) throws -> [String] {
        let entries = SyncedCookies.unnamedEntries(among: committed, sites: sites)
        for entry in entries { try store.git(["rm", "-q", "--", entry + ".gpg"]) }
        return entries
    }

    /// `.keyjar-cookies merge=union` in the store's `.gitattributes` (where pass keeps its own
    /// `*.gpg diff=gpg`).
    private func markUnion() throws {
        let file = (store.directory as NSString).appendingPathComponent(".gitattributes")
        let existing = (try? String(contentsOfFile: file, encoding: .utf8)) ?? ""
        guard !existing.split(whereSeparator: \.isNewline).contains(where: { $0 == Self.attributes }) else { return }
        let separator = existing.isEmpty || existing.hasSuffix("\n") ? "" : "\n"
        try (existing + separator + Self.attributes + "\n").write(toFile: file, atomically: true, encoding: .utf8)
    }
}
