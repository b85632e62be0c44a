import Rill

/// Version 1 of a task: `priority` is a word, and `legacy` is a field version 2 drops.
public struct TaskV1: PersistentModel, Equatable {
    public static let entityName = "Task"
    public var id: String
    public var title: String
    public var priority: String
    public var done: Bool
    public var legacy: Int

    public init(id: String, title: String, priority: String, done: Bool, legacy: Int = 1) {
        (self.id, self.title, self.priority, self.done, self.legacy) = (id, title, priority, done, legacy)
    }
}

/// Version 2: `title` renamed `name`, `priority` an integer (a kind change, migrated), `rank`
/// added with a default, `note` added optional, `legacy` removed.
public struct TaskV2: PersistentModel, Equatable {
    public static let entityName = "Task"
    public var id: String
    public var name: String
    public var priority: Int
    public var done: Bool
    public var rank: Int = 3
    public var note: String?

    public init(id: String, name: String, priority: Int, done: Bool, rank: Int = 3, note: String? = nil) {
        (self.id, self.name, self.priority, self.done, self.rank, self.note) = (id, name, priority, done, rank, note)
    }

    /// The migration's own rule, also the tests' oracle.
    public static func migrated(_ old: TaskV1) -> TaskV2 {
        TaskV2(
            id: old.id, name: old.title, priority: ["low": 1, "mid": 2, "high": 3][old.priority] ?? 0, done: old.done)
    }

    public static let evolution = ModelEvolution<TaskV2>(
        .renamed(\.name, from: "title"), .added(\.rank, default: 3), .migrated(from: TaskV1.self, migrated))
    public static var indexes: [ModelIndex<TaskV2>] { [ModelIndex(\.priority)] }
}

/// Version 2 without its migration.
public struct TaskV2Unmigrated: PersistentModel, Equatable {
    public static let entityName = "Task"
    public var id: String
    public var name: String
    public var priority: Int
    public var done: Bool

    public static let evolution = ModelEvolution<TaskV2Unmigrated>(.renamed(\.name, from: "title"))
}
