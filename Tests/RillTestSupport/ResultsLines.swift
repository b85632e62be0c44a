import Foundation

/// The NDJSON lines of `rill watch --json` and the data of the daemon's events (Protocol.md), read
/// back by the tests.
package enum ResultsLines {
    package static func object(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
    }

    package static func sequence(_ line: String) -> UInt64 { (object(line)["seq"] as? NSNumber)?.uint64Value ?? 0 }

    /// Whether `line` is a progress line, `{"seq":N}`: commits up to N left the results as they were.
    package static func isProgress(_ line: String) -> Bool { Array(object(line).keys) == ["seq"] }

    /// Applies NDJSON change lines to records, as Protocol.md says.
    package static func apply(_ lines: some Sequence<String>, to start: [NSDictionary]) -> [NSDictionary] {
        var mismatches: [String] = []
        return apply(lines, to: start, beforeMismatches: &mismatches)
    }

    /// `apply`, checking that every move's and update's `before` is the record at its old offset
    /// (`from`, `oldOffset`) in the records before its line; each that is not is told in
    /// `beforeMismatches`.
    package static func apply(
        _ lines: some Sequence<String>, to start: [NSDictionary], beforeMismatches: inout [String]
    ) -> [NSDictionary] {
        var records = start
        for line in lines {
            let change = object(line)
            func entries(_ name: String) -> [[String: Any]] { change[name] as? [[String: Any]] ?? [] }
            for (name, offset) in [("moves", "from"), ("updates", "oldOffset")] {
                for entry in entries(name) {
                    let old = entry[offset] as! Int
                    if !records.indices.contains(old) || entry["before"] as? NSDictionary != records[old] {
                        beforeMismatches.append("seq \(change["seq"] ?? "?"), \(name) from \(old): \(entry)")
                    }
                }
            }
            var taken: [(Int, Int)] = entries("removals").map { ($0["offset"] as! Int, -1) }
            taken += entries("moves").map { ($0["from"] as! Int, -1) }
            for (offset, _) in taken.sorted(by: { $0.0 > $1.0 }) { records.remove(at: offset) }
            var placed: [(Int, NSDictionary)] = entries("insertions").map {
                ($0["offset"] as! Int, $0["record"] as! NSDictionary)
            }
            placed += entries("moves").map { ($0["to"] as! Int, $0["record"] as! NSDictionary) }
            for (offset, record) in placed.sorted(by: { $0.0 < $1.0 }) { records.insert(record, at: offset) }
            for update in entries("updates") { records[update["offset"] as! Int] = update["record"] as! NSDictionary }
        }
        return records
    }
}
