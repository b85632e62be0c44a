import Foundation
import Rill

#if canImport(Glibc)
    import Glibc
#endif

/// A save a suite's writer was told succeeded: what must be found in the store afterwards.
package struct AcknowledgedSave: Sendable, Hashable {
    /// The commit the save returned.
    package var sequence: UInt64
    /// The records it wrote: entity, identifier storage key, and whether it deleted the record.
    package var changes: [Change]

    package struct Change: Sendable, Hashable {
        package var entity: String
        package var key: [UInt8]
        package var isDelete: Bool

        package init(entity: String, key: [UInt8], isDelete: Bool = false) {
            self.entity = entity
            self.key = key
            self.isDelete = isDelete
        }
    }

    package init(sequence: UInt64, changes: [Change]) {
        self.sequence = sequence
        self.changes = changes
    }
}

/// The full verification that ends every fault of every suite.
///
/// - The log is gapless, and the projections and every index equal a replay of it (`rill check`).
/// - No reader slot of a dead process remains once the store is open again.
/// - Every acknowledged save is in the log, at the commit it returned, with the changes it made.
package enum StoreVerification {
    /// Opens the store in `directory` (as a process starting after the fault would) and returns
    /// every problem found, in a sentence each; empty when the store holds.
    package static func verify(
        directory: String, acknowledged: some Collection<AcknowledgedSave>, options: StoreOptions = StoreOptions()
    ) -> [String] {
        var problems: [String] = []
        let store: Store
        do {
            store = try Store(directory: directory, options: options, create: false)
        } catch {
            return ["the store does not open: \(error)"]
        }
        do {
            let report = try store.check()
            problems += report.problems
            if report.unreported > 0 { problems.append("… and \(report.unreported) more problems of rill check") }
        } catch {
            problems.append("rill check failed: \(error)")
        }
        for slot in store.readerSlots() where !isAlive(slot.pid) {
            let transaction = slot.transaction.map(String.init) ?? "-"
            problems.append("a reader slot of process \(slot.pid), which is dead, remains (transaction \(transaction))")
        }
        do {
            problems += try missing(acknowledged, in: store)
        } catch {
            problems.append("the log cannot be read: \(error)")
        }
        return problems
    }

    /// The acknowledged saves the log does not hold as they were acknowledged.
    package static func missing(_ acknowledged: some Collection<AcknowledgedSave>, in store: Store) throws -> [String] {
        let wanted = Dictionary(acknowledged.map { ($0.sequence, $0) }, uniquingKeysWith: { first, _ in first })
        guard let first = wanted.keys.min() else { return [] }
        var found: Set<UInt64> = []
        var problems: [String] = []
        try store.read { snapshot in
            try store.log.forEachEntry(after: first - 1, in: snapshot) { entry in
                guard let save = wanted[entry.sequence] else { return true }
                found.insert(entry.sequence)
                for change in save.changes {
                    let held = entry.changes.contains {
                        $0.entity == change.entity && $0.key == change.key && ($0.kind == .delete) == change.isDelete
                    }
                    if !held {
                        problems.append(
                            "commit \(entry.sequence) lacks the acknowledged \(change.isDelete ? "delete" : "write") "
                                + "of \(change.entity) \(describe(change.key))")
                    }
                }
                return true
            }
        }
        for sequence in wanted.keys.sorted() where !found.contains(sequence) {
            problems.append("the acknowledged commit \(sequence) is not in the log")
        }
        return problems
    }

    /// An identifier storage key as the identifier it stands for.
    static func describe(_ key: [UInt8]) -> String {
        key.withUnsafeBytes { AnyIdentifier(storageKey: $0) }.map { "\($0)" } ?? "\(key)"
    }

    /// Whether process `pid` exists.
    static func isAlive(_ pid: Int32) -> Bool {
        kill(pid, 0) == 0 || errno == EPERM
    }
}
