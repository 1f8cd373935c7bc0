import Foundation
import Glibc
import KeyjarSQLite

extension DiskIndex {
    // MARK: Leftovers

    /// What may be left over, read without the cache's lock held for long: the files in
    /// `bodies/` no row names (partial or complete), and the rows (key, file) whose file is
    /// not there. Each is only a candidate, checked again before it goes.
    struct Leftovers {
        var unnamedFiles: [String]
        var rowsWithoutFile: [(key: String, file: String)]
    }

    /// The candidates: `present` is the listing of `bodies/` taken before (so that a file
    /// a writer indexes meanwhile is at worst a candidate the lock check turns down).
    func leftoverCandidates(present: [String]) -> Leftovers {
        var rows: [(key: String, file: String)] = []
        if let statement = try? connection.statement("SELECT key, body_file FROM entry") {
            while (try? statement.step()) == true { rows.append((statement.text(0), statement.text(1))) }
            statement.reset()
        }
        let named = Set(rows.map(\.file))
        return Leftovers(
            unnamedFiles: present.filter { !named.contains($0) },
            rowsWithoutFile: rows.filter { access(bodies.appendingPathComponent($0.file).path, F_OK) != 0 }
        )
    }

    /// Whether a row names `file`.
    func names(_ file: String) -> Bool {
        let statement = try? connection.statement("SELECT 1 FROM entry WHERE body_file = ? LIMIT 1").bind(.text(file))
        defer { statement?.reset() }
        return (try? statement?.step()) != false
    }

    /// Deletes the row `key` if it still names `file` and `file` is (still) not there or not
    /// `size` bytes long (nil: only if missing): a body removed or cut short by hand or by a power loss. A file named
    /// by a committed row is unlinked only after that row is deleted, and never written again,
    /// so such a file means the row is stale, never that a writer is at work.
    func removeRow(_ key: String, ifItNames file: String, of size: Int?) {
        var info = stat()
        if stat(bodies.appendingPathComponent(file).path, &info) == 0, size.map({ Int(info.st_size) == $0 }) ?? true {
            return
        }
        _ = try? connection.statement("DELETE FROM entry WHERE key = ? AND body_file = ?").bind(
            .text(key),
            .text(file)
        ).run()
    }
}
