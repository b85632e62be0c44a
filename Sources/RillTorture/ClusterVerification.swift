import Foundation
import Rill

/// The checks that end the cluster suite, once every node has stopped: each node's store against
/// the stream, against the other nodes' and against the replay of the log.
///
/// - Every node's log is the stream's, entry for entry, byte for byte (the same commits in the
///   same order on every node).
/// - Each node's store holds (``StoreVerification``): projections and every index equal a replay
///   of its log, no dead reader slot, every save acknowledged on any node in the log at its
///   sequence with its changes. And in the stream, with the numbers it wrote, no sequence
///   acknowledged twice (``acknowledgedProblems(_:stream:)``, which the suite counts as lost).
/// - Every node's records are the same bytes, and the replay's records.
/// - Each node's live results at the end equal a fresh fetch on its store, the replay's results,
///   and the other nodes' results.
package enum ClusterVerification {
    package static func verify(
        stream: [LogEntry], oracle: ClusterOracle, transcripts: [ClusterTranscript], stores: [String]
    ) -> [String] {
        var problems: [String] = []
        var records: [[[UInt8]: [UInt8]]] = []
        for (node, directory) in stores.enumerated() {
            let acknowledged = transcripts.flatMap(\.acknowledged)
            problems += StoreVerification.verify(directory: directory, acknowledged: acknowledged).map {
                "node \(node): \($0)"
            }
            do {
                let store = try Store(directory: directory, options: StoreOptions(), create: false)
                problems += try logProblems(store, node: node, stream: stream)
                let held = try heldRecords(store)
                records.append(held)
                problems += try recordProblems(held, node: node, oracle: oracle)
                problems += try liveProblems(store, node: node, oracle: oracle, transcript: transcripts[node])
            } catch {
                problems.append("node \(node): its store cannot be read: \(error)")
            }
        }
        for node in records.indices.dropFirst() where records[node] != records[0] {
            problems.append("node \(node)'s records differ from node 0's")
        }
        let finals = transcripts.map(\.finalRows)
        for node in finals.indices.dropFirst() where finals[node] != finals[0] {
            problems.append("node \(node)'s final live results differ from node 0's")
        }
        return problems
    }

    /// The node's log against the stream's entries.
    static func logProblems(_ store: Store, node: Int, stream: [LogEntry]) throws -> [String] {
        let entries = try store.entries(after: 0)
        if entries.count != stream.count {
            return ["node \(node) holds \(entries.count) commits, the stream \(stream.count)"]
        }
        for (ours, theirs) in zip(entries, stream)
        where ours.sequence != theirs.sequence || ours.encoded != theirs.encoded {
            return ["node \(node)'s commit \(ours.sequence) is not the stream's commit \(theirs.sequence)"]
        }
        return []
    }

    static func heldRecords(_ store: Store) throws -> [[UInt8]: [UInt8]] {
        var records: [[UInt8]: [UInt8]] = [:]
        try store.forEachRecord(of: try store.existingEntity(ClusterItem.entity)) { key, record in
            records[Array(key)] = Array(record)
            return true
        }
        return records
    }

    /// The node's records against the replay's.
    static func recordProblems(_ held: [[UInt8]: [UInt8]], node: Int, oracle: ClusterOracle) throws -> [String] {
        var items: [String: ClusterQuery.Item] = [:]
        for (key, record) in held {
            guard let item = try ClusterItem.item(key: key, record: record) else {
                return ["node \(node) holds a record of another shape"]
            }
            items[item.id] = item
        }
        return items == oracle.items
            ? [] : ["node \(node) holds \(items.count) records that differ from the replay's \(oracle.items.count)"]
    }

    /// The node's final live results against a fresh fetch and the replay.
    static func liveProblems(
        _ store: Store, node: Int, oracle: ClusterOracle, transcript: ClusterTranscript
    ) throws -> [String] {
        guard let end = transcript.end else { return ["node \(node) did not end"] }
        guard end == oracle.last else { return ["node \(node) ended at commit \(end), the log at \(oracle.last)"] }
        var problems: [String] = []
        for (index, query) in oracle.queries.enumerated() {
            let fetched = try store.run(try QueryParser.parse(query.text)).map(ClusterJournal.row)
            let live = transcript.finalRows[index] ?? []
            let replayed = oracle.rows(index, at: end)
            if fetched != replayed {
                problems.append("node \(node): a fresh fetch of \(query.text) gives \(fetched), the replay \(replayed)")
            }
            if live != fetched {
                problems.append("node \(node): the live results of \(query.text) are \(live), a fresh fetch \(fetched)")
            }
        }
        return problems
    }

    /// Every acknowledged save against the stream: its commit holds exactly what the node was
    /// told it wrote; no commit was acknowledged twice.
    package static func acknowledgedProblems(_ transcripts: [ClusterTranscript], stream: [LogEntry]) -> [String] {
        var problems: [String] = []
        var owners: [UInt64: Int] = [:]
        for transcript in transcripts {
            for save in transcript.saves {
                if let other = owners[save.sequence] {
                    problems.append(
                        "commit \(save.sequence) was acknowledged to node \(other) and to node \(transcript.node)")
                }
                owners[save.sequence] = transcript.node
                guard save.sequence >= 1, save.sequence <= UInt64(stream.count) else {
                    problems.append(
                        "the acknowledged commit \(save.sequence) of node \(transcript.node) is not in the stream")
                    continue
                }
                let entry = stream[Int(save.sequence) - 1]
                let held = entry.changes.filter { $0.entity == ClusterItem.entity }.map { change in
                    let item = try? change.record.flatMap { try ClusterItem.item(key: change.key, record: $0) }
                    return ClusterJournal.Write(
                        id: ClusterItem.id(change.key) ?? "\(change.key)",
                        number: change.kind == .delete ? nil : item?.number ?? -1)
                }
                if Set(held) != Set(save.writes) || held.count != save.writes.count {
                    problems.append(
                        "the acknowledged commit \(save.sequence) of node \(transcript.node) holds \(held) in the stream; "
                            + "the node was told \(save.writes)"
                    )
                }
            }
        }
        return problems
    }
}
