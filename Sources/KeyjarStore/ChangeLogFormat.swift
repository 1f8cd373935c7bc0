/// How a `change_log` row's `event` column is written (Schemas/change-log.md). Stored beside
/// each entry, so that changing the event's JSON is a decision with a version, never a silent
/// migration: entries of a format this build does not replay send their readers to a snapshot.
enum ChangeLogFormat: Int64, Sendable {
    /// An event too large to keep (``StoreDatabase/largestLoggedEvent``); `event` is empty.
    case compacted = 0
    /// `KeyjarCodec.StoreEventJSON` version 1: written before cookies had a partition key.
    case storeEventJSONVersion1 = 1
    /// `KeyjarCodec.StoreEventJSON` version 2: a cookie may carry `partitionKey`.
    case storeEventJSONVersion2 = 2

    /// The formats this build replays: version 2 reads version 1 as it is (no cookie of it is
    /// partitioned).
    var isReplayable: Bool { self == .storeEventJSONVersion1 || self == .storeEventJSONVersion2 }
}
