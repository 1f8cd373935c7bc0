/// keyjard's subscribers in the order a change reaches them: oldest connection first.
///
/// Why an order at all: with a hundred clients on a small machine, a change reaches the last
/// subscriber a millisecond or more after the first (each wake-up takes the kernel time, and
/// the woken processes share the CPUs), so a client's place in the fan-out is its latency
/// (docs/performance.md, Fan-out). A dictionary's order depends on a per-run random hash seed
/// and changes when the table grows, so every client's latency would move from run to run and
/// within one. In connection order each client keeps its place for as long as it stays
/// connected, and the programs a user keeps open come before a tool that connected a moment
/// ago.
///
/// Connection ids grow with each accepted connection, so the list is kept sorted by id.
/// Confined to the service's event loop, like the connections it holds.
struct SubscriberList<Client: IdentifiedConnection> {
    /// Sorted by ``IdentifiedConnection/id``.
    private(set) var clients: [Client] = []

    var count: Int { clients.count }

    subscript(id: UInt64) -> Client? {
        let (found, index) = position(of: id)
        return found ? clients[index] : nil
    }

    /// Adds `client`, or replaces the entry with its id.
    mutating func insert(_ client: Client) {
        let (found, index) = position(of: client.id)
        if found { clients[index] = client } else { clients.insert(client, at: index) }
    }

    mutating func remove(id: UInt64) {
        let (found, index) = position(of: id)
        if found { clients.remove(at: index) }
    }

    mutating func removeAll() { clients.removeAll() }

    /// Where `id` is, or where it would go (the newest connection goes last: usually the end).
    private func position(of id: UInt64) -> (found: Bool, index: Int) {
        if let last = clients.last, last.id < id { return (false, clients.count) }
        var low = 0
        var high = clients.count
        while low < high {
            let middle = (low + high) / 2
            if clients[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return (low < clients.count && clients[low].id == id, low)
    }
}

/// A connection as ``SubscriberList`` orders it: by the id given when it was accepted.
protocol IdentifiedConnection {
    var id: UInt64 { get }
}

extension ServedClient: IdentifiedConnection {}
