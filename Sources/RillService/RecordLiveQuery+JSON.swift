import Foundation
import Rill

// The JSON shapes of a text live query's results and changes, shared by `rill watch --json` and
// `rill serve`'s subscriptions (Documentation/Protocol.md):
//
//   results:  {"seq":N,"results":[{…record…}, …]}
//   change:   {"seq":N,"removals":[{"offset":i,"id":…,"record":{…}}],
//              "insertions":[{"offset":i,"id":…,"record":{…}}],
//              "moves":[{"from":i,"to":j,"id":…,"record":{…},"before":{…}}],
//              "updates":[{"oldOffset":i,"offset":j,"id":…,"record":{…},"before":{…}}]}
//   progress: {"seq":N}   (the results are unchanged up to commit N)
//
// Removals carry the record as it was; the others the record as it is, and moves and updates the
// record as it was too (`before`, an addition older readers ignore). Applying a change to the
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

    /// `{"seq":N}`: the results are as they were, up to commit N.
    package static func progressJSON(sequence: UInt64) -> RecordValue {
        .map([RecordField(name: "seq", value: .uint(sequence))])
    }

    /// `{"seq":N,"removals":[…],"insertions":[…],"moves":[…],"updates":[…]}`.
    package static func changeJSON(_ change: ResultsChange<QueryRow>) -> RecordValue {
        func entry(_ fields: [(String, Int)], _ row: QueryRow, before: QueryRow? = nil) -> RecordValue {
            var entry = fields.map { RecordField(name: $0.0, value: .int(Int64($0.1))) }
            entry.append(RecordField(name: "id", value: row.identifierValue))
            entry.append(RecordField(name: "record", value: row.record))
            if let before { entry.append(RecordField(name: "before", value: before.record)) }
            return .map(entry)
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
                value: .array(
                    change.moves.map { entry([("from", $0.from), ("to", $0.to)], $0.element, before: $0.oldElement) })),
            RecordField(
                name: "updates",
                value: .array(
                    change.updates.map {
                        entry([("oldOffset", $0.oldOffset), ("offset", $0.offset)], $0.element, before: $0.oldElement)
                    })),
        ])
    }
}

extension RecordLiveQuery {
    /// The rows and sequence of a `{"seq":N,"results":[…]}` object (a client reading a stream);
    /// nil when it is not one. Rows carry no identifier key.
    package static func results(fromJSON value: RecordValue) -> (rows: [QueryRow], sequence: UInt64)? {
        guard case .map(let fields) = value, let sequence = Self.sequence(fields),
            case .array(let records)? = fields.first(where: { $0.name == "results" })?.value
        else { return nil }
        return (records.map { QueryRow(key: [], record: $0) }, sequence)
    }

    /// The change of a `{"seq":N,"removals":[…],…}` object (a client reading a stream); nil when
    /// it is not one. Rows carry no identifier key. A move or update without `before` (from a
    /// daemon older than that field) is read with its record as it is for both elements.
    package static func change(fromJSON value: RecordValue) -> ResultsChange<QueryRow>? {
        guard case .map(let fields) = value, let sequence = Self.sequence(fields) else { return nil }
        func entries(_ name: String) -> [[RecordField]]? {
            guard case .array(let items)? = fields.first(where: { $0.name == name })?.value else { return nil }
            return items.compactMap { if case .map(let entry) = $0 { entry } else { nil } }
        }
        func int(_ entry: [RecordField], _ name: String) -> Int? {
            if case .int(let value)? = entry.first(where: { $0.name == name })?.value { return Int(value) }
            return nil
        }
        func row(_ entry: [RecordField], named name: String) -> QueryRow? {
            entry.first { $0.name == name }.map { QueryRow(key: [], record: $0.value) }
        }
        func row(_ entry: [RecordField]) -> QueryRow { row(entry, named: "record") ?? QueryRow(key: [], record: .null) }
        guard let removals = entries("removals"), let insertions = entries("insertions"), let moves = entries("moves"),
            let updates = entries("updates")
        else { return nil }
        var change = ResultsChange<QueryRow>(sequence: sequence, removals: [], insertions: [], moves: [], updates: [])
        for entry in removals {
            guard let offset = int(entry, "offset") else { return nil }
            change.removals.append(.init(offset: offset, element: row(entry)))
        }
        for entry in insertions {
            guard let offset = int(entry, "offset") else { return nil }
            change.insertions.append(.init(offset: offset, element: row(entry)))
        }
        for entry in moves {
            guard let from = int(entry, "from"), let to = int(entry, "to") else { return nil }
            let element = row(entry)
            change.moves.append(
                .init(from: from, to: to, oldElement: row(entry, named: "before") ?? element, element: element))
        }
        for entry in updates {
            guard let old = int(entry, "oldOffset"), let offset = int(entry, "offset") else { return nil }
            let element = row(entry)
            change.updates.append(
                .init(
                    oldOffset: old, offset: offset, oldElement: row(entry, named: "before") ?? element, element: element
                ))
        }
        return change
    }

    private static func sequence(_ fields: [RecordField]) -> UInt64? {
        switch fields.first(where: { $0.name == "seq" })?.value {
        case .int(let value)? where value >= 0: UInt64(value)
        case .uint(let value)?: value
        default: nil
        }
    }
}
