/// How far a long operation on a store has come: building an index over the records an entity already holds,
/// or rebuilding one when a store written by an older Rill is opened.
///
/// Rill writes nothing to standard error; an app that wants to show progress gives a handler to the
/// ``ModelContainer`` it opens (its `progress` parameter). Each phase reports first with ``completed`` 0, then
/// every 1,024 records, and last with ``completed`` equal to ``total``; ``completed`` never goes down within a
/// phase.
///
/// For example:
///
/// ```swift
/// let container = try ModelContainer(for: Book.self, configurations: configuration) { progress in
///     print("\(progress.phase): \(progress.completed) of \(progress.total) records")
/// }
/// ```
///
/// The handler runs on the thread that writes to the store, inside the write that builds the index: it should
/// return quickly, and must not use the container.
public struct StoreProgress: Sendable, Hashable, CustomStringConvertible {
    /// What the store is doing.
    public enum Phase: Sendable, Hashable, CustomStringConvertible {
        /// Building a newly declared index of `entity` (named by its field paths, `author,pages`) from the records
        /// it holds.
        case buildingIndex(entity: String, index: String)
        /// Replaying the log into every entity's records (`rill rebuild`, and once when a store written by
        /// an older Rill is raised to the current format); it counts commits, not records.
        case replayingLog

        /// `building index Book(author,pages)`, or `replaying the log`.
        public var description: String {
            switch self {
            case .buildingIndex(let entity, let index): "building index \(entity)(\(index))"
            case .replayingLog: "replaying the log"
            }
        }
    }

    /// What the store is doing.
    public let phase: Phase
    /// How many records (commits, when replaying the log) the phase has processed.
    public let completed: Int
    /// How many records (commits, when replaying the log) the phase processes in all.
    public let total: Int

    /// A report of `completed` out of `total` records in `phase`.
    public init(phase: Phase, completed: Int, total: Int) {
        self.phase = phase
        self.completed = completed
        self.total = total
    }

    /// Whether this is the last report of its phase.
    public var isFinished: Bool { completed >= total }

    /// `building index Book(title): 2048 of 10000 records`.
    public var description: String {
        "\(phase): \(completed) of \(total) \(unit)"
    }

    /// What ``completed`` and ``total`` count: `records`, or `commits` when replaying the log.
    public var unit: String { phase == .replayingLog ? "commits" : "records" }
}
