import Foundation
import Rill

/// What an observer (`rill watch <store> TortureItem --json`) was told, commit by commit, with
/// enough of each record to recognise it later: its number and payload, which no other save
/// repeats.
///
/// ``check(against:)`` replays a store's log and compares: every commit the observer heard of
/// must be in the store, with the records the observer was shown.
struct ObservedCommits {
    /// One line of the observer: the records it was shown as of commit `sequence` (nil for a
    /// record it was told was removed). `isWhole` for the results, which list every record.
    struct Observation {
        var sequence: UInt64
        var records: [String: String?]
        var isWhole: Bool
    }

    var observations: [Observation] = []

    init() {}

    /// Reads the observer's output; a last line the cut left unfinished is not read.
    init(output: Data) {
        for line in output.split(separator: UInt8(ascii: "\n")) {
            guard let value = try? JSONReader.parse(line), case .map(let fields) = value,
                let sequence = Self.field("seq", in: fields).flatMap(Self.unsigned)
            else { continue }
            var observation = Observation(sequence: sequence, records: [:], isWhole: false)
            if case .array(let rows)? = Self.field("results", in: fields) {
                observation.isWhole = true
                for row in rows {
                    guard case .map(let record) = row, let id = Self.field("id", in: record) else { continue }
                    observation.records[Self.text(id)] = Self.summary(row)
                }
            } else {
                for name in ["removals", "insertions", "moves", "updates"] {
                    guard case .array(let entries)? = Self.field(name, in: fields) else { continue }
                    for case .map(let entry) in entries {
                        guard let id = Self.field("id", in: entry) else { continue }
                        observation.records[Self.text(id)] =
                            name == "removals" ? .some(nil) : Self.field("record", in: entry).map(Self.summary)
                    }
                }
            }
            observations.append(observation)
        }
    }

    /// The last commit the observer was told of; nil when it was told of none.
    var lastSequence: UInt64? { observations.last?.sequence }

    /// Every way `store` contradicts what the observer was told, in a sentence each: the records
    /// it was shown that the store holds otherwise (`problems`), and the commits it heard of that
    /// the store lacks (`lacking`, a sentence for the first).
    func check(against store: Store) throws -> (problems: [String], lacking: [String]) {
        var state: [String: String] = [:]
        var replayed: UInt64 = 0
        var problems: [String] = []
        var lacking: [String] = []
        let head = try store.head()
        var entries: [LogEntry] = []
        try store.read { snapshot in
            try store.log.forEachEntry(after: 0, in: snapshot) { entry in
                entries.append(entry)
                return true
            }
        }
        var next = entries.startIndex
        for observation in observations {
            guard observation.sequence <= head else {
                lacking.append(
                    "the observer was told of commit \(observation.sequence), which the store lacks (its last is \(head))"
                )
                continue
            }
            while next < entries.endIndex, entries[next].sequence <= observation.sequence {
                try Self.apply(entries[next], to: &state)
                replayed = entries[next].sequence
                next += 1
            }
            if observation.isWhole {
                let shown = observation.records.compactMapValues { $0 }
                if shown != state {
                    problems.append(
                        "the observer's results at commit \(observation.sequence) differ from the store's "
                            + "(\(shown.count) records shown, \(state.count) held)")
                }
                continue
            }
            for (id, summary) in observation.records where state[id] != summary {
                problems.append(
                    "the observer was told \(id) is \(summary ?? "removed") at commit \(observation.sequence); "
                        + "the store holds \(state[id] ?? "nothing") (replayed to \(replayed))")
            }
        }
        return (problems, lacking)
    }

    static func apply(_ entry: LogEntry, to state: inout [String: String]) throws {
        guard case .map(let fields) = try entry.jsonValue(), case .array(let changes)? = field("changes", in: fields)
        else { return }
        for case .map(let change) in changes {
            guard let id = field("id", in: change) else { continue }
            state[text(id)] = field("record", in: change).map(summary)
        }
    }

    static func field(_ name: String, in fields: [RecordField]) -> RecordValue? {
        fields.first { $0.name == name }?.value
    }

    static func unsigned(_ value: RecordValue) -> UInt64? {
        switch value {
        case .uint(let number): number
        case .int(let number): UInt64(exactly: number)
        default: nil
        }
    }

    static func text(_ value: RecordValue) -> String {
        if case .string(let string) = value { return string }
        return "\(value)"
    }

    /// A record as its number and payload: what no other save of the suite's writers repeats.
    static func summary(_ record: RecordValue) -> String {
        guard case .map(let fields) = record else { return "\(record)" }
        let number = field("number", in: fields).map { "\(unsigned($0).map(String.init) ?? "\($0)")" } ?? "?"
        let payload = field("payload", in: fields).map(text) ?? "?"
        return "#\(number) \(payload.prefix(12))…(\(payload.count))"
    }
}
