import Foundation

/// Records the follower has seen in the commits it applied (and in walks back through the log),
/// each as of the last commit applied: so that refilling a window rarely reads the log again.
/// Bounded: past `capacity` records it starts afresh.
final class RecordImages {
    private var records: [String: [[UInt8]: [UInt8]?]] = [:]
    private var count = 0
    private let capacity: Int

    init(capacity: Int = 1 << 16) { self.capacity = capacity }

    /// `.some(nil)`: the record did not exist; nil: not known.
    func record(of entity: String, key: [UInt8]) -> [UInt8]?? {
        guard let table = records[entity], let entry = table[key] else { return nil }
        return .some(entry)
    }

    func remember(entity: String, key: [UInt8], record: [UInt8]?, ifAbsent: Bool = false) {
        if ifAbsent, self.record(of: entity, key: key) != nil { return }
        if count >= capacity {
            records.removeAll()
            count = 0
        }
        if records[entity, default: [:]].updateValue(record, forKey: key) == nil { count += 1 }
    }

    /// Forgets every record: after commits the follower could not read (compacted away), the
    /// images may be older than the last commit applied.
    func removeAll() {
        records.removeAll()
        count = 0
    }

    /// Notes every change of `entry` to one of `entities`.
    func apply(_ entry: LogEntry, entities: some Collection<String>) {
        for change in entry.changes where entities.contains(change.entity) {
            remember(entity: change.entity, key: change.key, record: change.record)
        }
    }
}
