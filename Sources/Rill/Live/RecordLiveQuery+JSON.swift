import Foundation

// The JSON shapes of a text live query's results and changes, shared by `rill watch --json` and
// `rill serve`'s subscriptions (Documentation/Protocol.md):
//
//   results: {"seq":N,"results":[{…record…}, …]}
//   change:  {"seq":N,"removals":[{"offset":i,"id":…,"record":{…}}],
//             "insertions":[{"offset":i,"id":…,"record":{…}}],
//             "moves":[{"from":i,"to":j,"id":…,"record":{…}}],
//             "updates":[{"oldOffset":i,"offset":j,"id":…,"record":{…}}]}
//
// Removals carry the record as it was; the others the record as it is. Applying a change to the
// previous results: remove at `removals` and every move's `from`, highest offset first; insert at
// `insertions` and every move's `to`, lowest offset first; replace at `updates`' `offset`.

extension QueryRow {
    /// The row's identifier as a JSON-friendly value.
    package var identifierValue: RecordValue {
        (try? LogEntry.identifierValue(key)) ?? .null
    }
}

extension RecordLiveQuery {
    /// `{"seq":N,"results":[…]}`.
    package static func resultsJSON(_ rows: [QueryRow], sequence: UInt64) -> RecordValue {
        .map([
            RecordField(name: "seq", value: .uint(sequence)),
            RecordField(name: "results", value: .array(rows.map(\.record))),
        ])
    }

    /// `{"seq":N,"removals":[…],"insertions":[…],"moves":[…],"updates":[…]}`.
    package static func changeJSON(_ change: ResultsChange<QueryRow>) -> RecordValue {
        func entry(_ fields: [(String, Int)], _ row: QueryRow) -> RecordValue {
            .map(
                fields.map { RecordField(name: $0.0, value: .int(Int64($0.1))) } + [
                    RecordField(name: "id", value: row.identifierValue),
                    RecordField(name: "record", value: row.record),
                ])
        }
        return .map([
            RecordField(name: "seq", value: .uint(change.sequence)),
            RecordField(
                name: "removals", value: .array(change.removals.map { entry([("offset", $0.offset)], $0.element) })),
            RecordField(
                name: "insertions",
                value: .array(change.insertions.map { entry([("offset", $0.offset)], $0.element) })),
            RecordField(
                name: "moves",
                value: .array(change.moves.map { entry([("from", $0.from), ("to", $0.to)], $0.element) })
            ),
            RecordField(
                name: "updates",
                value: .array(
                    change.updates.map { entry([("oldOffset", $0.oldOffset), ("offset", $0.offset)], $0.element) })),
        ])
    }
}
