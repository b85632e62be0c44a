import Foundation
import Rill
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

/// The saves of one incarnation of a cluster node: random inserts, updates and deletes of
/// ``ClusterItem``s, one to three in a save, each journaled once its commit returned (`save`, with
/// what the commit wrote) or once it failed typed (`refused`, with the error's code).
///
/// Expected failures: `.uniqueConflict` (a slot another record holds, perhaps since another
/// node's commit that this one applied before validating again), `.replicationUnavailable` (the
/// stream did not answer: not acknowledged, and perhaps committed all the same), and
/// `.invalidRecord` for an update of a record another node deleted meanwhile. Any other error is
/// journaled too, and the suite reports it.
package struct ClusterSaver {
    let store: Store
    let journal: ClusterJournal
    let node: Int
    let incarnation: Int
    private var random: SeededGenerator
    private var counter = 0

    package init(store: Store, journal: ClusterJournal, node: Int, incarnation: Int, seed: UInt64) {
        self.store = store
        self.journal = journal
        self.node = node
        self.incarnation = incarnation
        random = SeededGenerator(seed: seed)
    }

    /// Makes one save; after a failed one, waits a little (the stream may be electing a leader).
    package mutating func saveOnce() {
        let count = Int.random(in: 0..<5, using: &random) == 0 ? Int.random(in: 2...3, using: &random) : 1
        var ids: Set<String> = []
        while ids.count < count { ids.insert("c\(Int.random(in: 0..<ClusterItem.identifiers, using: &random))") }
        var changes: [String] = []
        var intended: [Int] = []
        for id in ids.sorted() {
            counter += 1
            let number = ClusterItem.number(
                bucket: Int.random(in: 0..<ClusterItem.buckets, using: &random),
                unique: ClusterItem.unique(node: node, incarnation: incarnation, counter: counter))
            let tag = ClusterItem.tags.randomElement(using: &random)!
            let exists = held(id)
            switch Int.random(in: 0..<10, using: &random) {
            case 0..<2 where exists:
                changes.append(#"{"op":"delete","entity":"\#(ClusterItem.entity)","id":"\#(id)"}"#)
            case 2..<5 where exists:
                intended.append(number)
                changes.append(
                    #"{"op":"update","entity":"\#(ClusterItem.entity)","id":"\#(id)","record":"#
                        + #"{"number":\#(number),"tag":"\#(tag)"}}"#)
            default:
                intended.append(number)
                let slot = Int.random(in: 0..<ClusterItem.slots, using: &random)
                changes.append(
                    #"{"op":"insert","entity":"\#(ClusterItem.entity)","id":"\#(id)","record":"#
                        + #"{"writer":\#(node),"number":\#(number),"tag":"\#(tag)","slot":"s\#(slot)"}}"#)
            }
        }
        do {
            let parsed = try changes.map { try JSONChange(json: JSONReader.parse(Array($0.utf8))) }
            guard let entry = try store.commit(try store.prepare(parsed), author: "node \(node)") else { return }
            var line = ClusterJournal.Line(kind: "save")
            line.sequence = entry.sequence
            line.writes = try entry.changes.filter { $0.entity == ClusterItem.entity }.map { change in
                guard case .string(let id)? = change.key.withUnsafeBytes({ AnyIdentifier(storageKey: $0) }) else {
                    throw TortureUsage("commit \(entry.sequence) holds a ClusterItem key that is not a string")
                }
                let item = try change.record.flatMap { try ClusterItem.item(key: change.key, record: $0) }
                return ClusterJournal.Write(id: id, number: change.kind == .delete ? nil : item?.number ?? -1)
            }
            journal.append(line)
            let written = Set(line.writes!.compactMap(\.number))
            if let missing = intended.first(where: { !written.contains($0) }) {
                var failure = ClusterJournal.Line(kind: "failure")
                failure.message =
                    "node \(node): commit \(entry.sequence) returned by its save lacks the write of number \(missing)"
                journal.append(failure)
            }
        } catch let error as RillError {
            var line = ClusterJournal.Line(kind: "refused")
            line.code = error.code.description
            line.message = error.message
            journal.append(line)
            if error.code == .replicationUnavailable { usleep(200_000) }
        } catch {
            var line = ClusterJournal.Line(kind: "refused")
            line.code = "other"
            line.message = "\(error)"
            journal.append(line)
        }
    }

    /// Whether this node's store holds a record `id` now.
    private func held(_ id: String) -> Bool {
        var found = false
        try? store.forEachRecord(of: try store.existingEntity(ClusterItem.entity)) { key, _ in
            if Array(key) == ClusterItem.key(id) { found = true }
            return !found
        }
        return found
    }
}
