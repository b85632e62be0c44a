import Foundation
import Rill

/// The results of the kill suite's watched query after every commit, worked out by replaying the
/// log in plain Swift: the oracle a watcher's lines are checked against.
///
/// The query is `TortureItem where writer == W sort by number desc limit N` (`text`). A writer's
/// numbers never repeat (an update gives the item a new number), so the order has no ties.
package struct WatchOracle: Sendable {
    /// One row of the results: the item's identifier and number.
    package struct Row: Hashable, Sendable, CustomStringConvertible {
        package var id: String
        package var number: Int
        package var description: String { "\(id)#\(number)" }
    }

    package let writer: Int
    package let limit: Int
    /// Every commit that changed the results, in order, with the results after it.
    package private(set) var changes: [(sequence: UInt64, rows: [Row])] = []
    /// The log's last commit when the oracle was made.
    package private(set) var last: UInt64 = 0

    /// The query as `rill watch` and the daemon take it.
    package var text: String { "TortureItem where writer == \(writer) sort by number desc limit \(limit)" }

    package init(writer: Int, limit: Int) {
        self.writer = writer
        self.limit = limit
    }

    /// Replays the log of the store in `directory` from its first commit.
    package mutating func replay(directory: String) throws {
        let store = try Store(directory: directory, options: StoreOptions(), create: false)
        var numbers: [String: Int] = [:]
        // The writer's numbers in ascending order: the results are its last `limit`.
        var sorted: [Int] = []
        var owner: [Int: String] = [:]
        var previous: [Row] = []
        var collected: [(UInt64, [Row])] = []
        var last: UInt64 = 0
        let writer = writer
        let limit = limit
        func remove(_ id: String) {
            guard let number = numbers.removeValue(forKey: id) else { return }
            if let index = Self.position(of: number, in: sorted), sorted[index] == number { sorted.remove(at: index) }
            owner[number] = nil
        }
        try store.read { snapshot in
            try store.log.forEachEntry(after: 0, in: snapshot) { entry in
                last = entry.sequence
                var touched = false
                for change in entry.changes where change.entity == TortureItem.entityName {
                    guard case .string(let id)? = change.key.withUnsafeBytes({ AnyIdentifier(storageKey: $0) }) else {
                        continue
                    }
                    if numbers[id] != nil {
                        remove(id)
                        touched = true
                    }
                    guard change.kind != .delete, let bytes = change.record else { continue }
                    let value = try bytes.withUnsafeBytes { try RecordValue(record: $0) }
                    guard Self.integer("writer", in: value) == writer, let number = Self.integer("number", in: value)
                    else { continue }
                    numbers[id] = number
                    sorted.insert(number, at: Self.position(of: number, in: sorted) ?? sorted.count)
                    owner[number] = id
                    touched = true
                }
                guard touched else { return true }
                let rows = sorted.suffix(limit).reversed().map { Row(id: owner[$0]!, number: $0) }
                if rows != previous {
                    collected.append((entry.sequence, rows))
                    previous = rows
                }
                return true
            }
        }
        changes = collected.map { (sequence: $0.0, rows: $0.1) }
        self.last = last
    }

    /// The results as of commit `sequence`.
    package func rows(at sequence: UInt64) -> [Row] {
        guard let index = changes.lastIndex(where: { $0.sequence <= sequence }) else { return [] }
        return changes[index].rows
    }

    /// The first commit after `sequence` that changed the results, if any.
    package func nextChange(after sequence: UInt64) -> UInt64? {
        var low = 0
        var high = changes.count
        while low < high {
            let middle = (low + high) / 2
            if changes[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
        }
        return low < changes.count ? changes[low].sequence : nil
    }

    /// The index of the first number not below `number` in `sorted`, nil when all are below.
    private static func position(of number: Int, in sorted: [Int]) -> Int? {
        var low = 0
        var high = sorted.count
        while low < high {
            let middle = (low + high) / 2
            if sorted[middle] < number { low = middle + 1 } else { high = middle }
        }
        return low < sorted.count ? low : nil
    }

    private static func integer(_ name: String, in value: RecordValue) -> Int? {
        guard case .map(let fields) = value, let field = fields.first(where: { $0.name == name }) else { return nil }
        switch field.value {
        case .int(let number): return Int(number)
        case .uint(let number): return Int(number)
        default: return nil
        }
    }
}
