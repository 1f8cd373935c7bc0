import NIOCore

/// How often keyjard logs that its database failed. A full disk fails every write, and a line
/// per write would fill what little room is left: the first failure in a second is logged, with
/// the number of those that were not logged since the last line.
struct StorageFailureLog: Sendable, Hashable {
    /// The shortest time between two lines.
    static let interval = TimeAmount.seconds(1)

    private var lastLogged = NIODeadline.distantPast
    private var notLogged = 0

    /// A failure at `now`: nil when it is not to be logged, else how many failures went
    /// unlogged before it.
    mutating func failure(at now: NIODeadline) -> Int? {
        guard now - lastLogged >= Self.interval else {
            notLogged += 1
            return nil
        }
        defer {
            lastLogged = now
            notLogged = 0
        }
        return notLogged
    }
}
