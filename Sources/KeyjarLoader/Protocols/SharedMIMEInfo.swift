import Foundation
import Glibc
import KeyjarPlatform

/// MIME types by file name from the system's shared-mime-info database (freedesktop.org's
/// `globs2`: `weight:type:glob[:flags]`), as a `file:` response's type. Among the globs that
/// match, the highest weight wins, then the longest glob; names are matched without regard to
/// case unless a glob is marked `cs`. Read once, from `$XDG_DATA_HOME` and `$XDG_DATA_DIRS`
/// (`/usr/local/share:/usr/share` by default), the user's first.
public struct SharedMIMEInfo: Sendable {
    struct Glob: Sendable {
        var weight: Int
        var type: String
        var pattern: String
        var caseSensitive: Bool
    }

    /// `*.ext` globs by their extension (the common case, looked up without matching).
    private var byExtension: [String: [Glob]] = [:]
    /// Every other glob, matched with fnmatch.
    private var others: [Glob] = []

    /// The database of this system (empty when shared-mime-info is not installed).
    public static let system = SharedMIMEInfo(paths: defaultPaths())

    static func defaultPaths(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String] {
        let directories = XDGDirectories(environment: environment)
        return ([directories.dataHome] + directories.dataDirectories).map { $0 + "/mime/globs2" }
    }

    init(paths: [String]) {
        var seen: Set<String> = []
        for path in paths {
            guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { continue }
            add(globs2: text, skipping: &seen)
        }
    }

    /// Parses one globs2 text (for tests).
    init(globs2 text: String) {
        var seen: Set<String> = []
        add(globs2: text, skipping: &seen)
    }

    private mutating func add(globs2 text: String, skipping seen: inout Set<String>) {
        var defined: Set<String> = []
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: ":", maxSplits: 3, omittingEmptySubsequences: false)
            guard fields.count >= 3, let weight = Int(fields[0]) else { continue }
            let pattern = String(fields[2])
            // A glob that a directory earlier in the search order defined is not redefined.
            guard !pattern.isEmpty, !seen.contains(pattern) else { continue }
            defined.insert(pattern)
            let caseSensitive = fields.count > 3 && fields[3].split(separator: ",").contains("cs")
            let glob = Glob(weight: weight, type: String(fields[1]), pattern: pattern, caseSensitive: caseSensitive)
            let suffix = pattern.dropFirst(2)
            if pattern.hasPrefix("*."), !suffix.contains(where: { "*?[".contains($0) }) {
                byExtension[(caseSensitive ? String(suffix) : suffix.lowercased()), default: []].append(glob)
            } else {
                others.append(glob)
            }
        }
        seen.formUnion(defined)
    }

    /// The MIME type of a file called `name`; nil when no glob matches.
    public func mimeType(forFileName name: String) -> String? {
        let lowered = name.lowercased()
        var best: Glob?
        func consider(_ glob: Glob) {
            guard let current = best else {
                best = glob
                return
            }
            if glob.weight > current.weight
                || (glob.weight == current.weight && glob.pattern.count > current.pattern.count)
            {
                best = glob
            }
        }
        // Every extension the name ends with: "a.tar.gz" tries "tar.gz" and "gz".
        var index = name.startIndex
        while let dot = name[index...].firstIndex(of: ".") {
            let suffix = name[name.index(after: dot)...]
            for glob in byExtension[String(suffix)] ?? [] where glob.caseSensitive { consider(glob) }
            for glob in byExtension[suffix.lowercased()] ?? [] where !glob.caseSensitive { consider(glob) }
            index = name.index(after: dot)
        }
        for glob in others {
            let subject = glob.caseSensitive ? name : lowered
            let pattern = glob.caseSensitive ? glob.pattern : glob.pattern.lowercased()
            if fnmatch(pattern, subject, 0) == 0 { consider(glob) }
        }
        return best?.type
    }
}
