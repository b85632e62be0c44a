import Rill
import RillWorkloads

/// One live query of the cluster suite over its `ClusterItem`s, as the text every node follows
/// and as plain Swift that evaluates it on the records of a replay: the oracle's side.
///
/// Every query is sorted by `number`, which no two saves repeat (``ClusterItem``), so its order
/// is total and its windows are those of any correct evaluation.
package struct ClusterQuery: Sendable, Hashable {
    /// A record as the oracle holds it: what the query's predicate reads, and its identity.
    package struct Item: Sendable, Hashable {
        package var id: String
        package var writer: Int
        package var number: Int
        package var tag: String
    }

    /// One row of the results: the record's identifier and number (one version of one record).
    package struct Row: Sendable, Hashable, Codable, CustomStringConvertible {
        package var id: String
        package var number: Int
        package var description: String { "\(id)#\(number)" }
    }

    /// Which records match.
    package enum Filter: Sendable, Hashable {
        case all
        case writer(Int)
        case numbers(Int, Int)
        case tag(String)
        case tagOrWriter(String, Int)
        case writerAndNumbersFrom(Int, Int)
    }

    package var filter: Filter
    package var descending: Bool
    package var limit: Int?
    package var offset: Int?

    /// The query in the text language, as the nodes' live queries take it.
    package var text: String {
        var text = ClusterItem.entity
        switch filter {
        case .all: break
        case .writer(let writer): text += " where writer == \(writer)"
        case .numbers(let low, let high): text += " where number >= \(low) and number < \(high)"
        case .tag(let tag): text += " where tag == \"\(tag)\""
        case .tagOrWriter(let tag, let writer): text += " where tag == \"\(tag)\" or writer == \(writer)"
        case .writerAndNumbersFrom(let writer, let low): text += " where writer == \(writer) and number >= \(low)"
        }
        text += " sort by number" + (descending ? " desc" : "")
        if let limit { text += " limit \(limit)" }
        if let offset { text += " offset \(offset)" }
        return text
    }

    /// Whether `item` matches the predicate.
    package func matches(_ item: Item) -> Bool {
        switch filter {
        case .all: true
        case .writer(let writer): item.writer == writer
        case .numbers(let low, let high): item.number >= low && item.number < high
        case .tag(let tag): item.tag == tag
        case .tagOrWriter(let tag, let writer): item.tag == tag || item.writer == writer
        case .writerAndNumbersFrom(let writer, let low): item.writer == writer && item.number >= low
        }
    }

    /// The results over `items`, given in ascending order of number: the predicate evaluated on
    /// each in the query's order, until the window is full.
    package func evaluate(sortedByNumber items: [Item]) -> [Row] {
        var rows: [Row] = []
        var skipped = 0
        let wanted = limit ?? .max
        guard wanted > 0 else { return [] }
        func take(_ item: Item) -> Bool {
            guard matches(item) else { return true }
            if skipped < offset ?? 0 {
                skipped += 1
                return true
            }
            rows.append(Row(id: item.id, number: item.number))
            return rows.count < wanted
        }
        if descending {
            for item in items.reversed() where !take(item) { break }
        } else {
            for item in items where !take(item) { break }
        }
        return rows
    }

    // MARK: - Random queries

    /// The `count` queries of a run: the same on every node and in every incarnation of a node,
    /// so that the nodes' final results can be compared with one another.
    package static func all(count: Int, seed: UInt64) -> [ClusterQuery] {
        var random = SeededGenerator(seed: seed &+ 0x5155_4552)
        return (0..<count).map { make(index: $0, using: &random) }
    }

    private static func make(index: Int, using random: inout SeededGenerator) -> ClusterQuery {
        let writer = Int.random(in: 0..<ClusterItem.writers, using: &random)
        let tag = ClusterItem.tags.randomElement(using: &random)!
        let low = Int.random(in: 0..<ClusterItem.buckets, using: &random)
        let high = low + Int.random(in: 1...(ClusterItem.buckets / 3), using: &random)
        let filter: Filter =
            switch index % 6 {
            case 0: .writer(writer)
            case 1: .numbers(low * ClusterItem.bucketSize, high * ClusterItem.bucketSize)
            case 2: .tag(tag)
            case 3: .tagOrWriter(tag, writer)
            case 4: .writerAndNumbersFrom(writer, low * ClusterItem.bucketSize)
            default: .all
            }
        let window = Int.random(in: 0..<3, using: &random)
        return ClusterQuery(
            filter: filter, descending: Bool.random(using: &random),
            limit: window == 0 ? nil : Int.random(in: 1...25, using: &random),
            offset: window == 2 ? Int.random(in: 1...5, using: &random) : nil)
    }
}
