import Foundation
import Rill

/// `rill stats`: what a store holds and how big it is.
struct StatsCommand: Command {
    let description = CommandDescription(
        name: "stats",
        abstract: "Print a store's entities with their record counts, the log head, and its sizes.",
        arguments: StatsOptions.arguments,
        options: StatsOptions.options,
        examples: [
            "rill stats ./books",
            "rill stats --json ./books",
        ]
    )

    func run(_ options: StatsOptions, output: inout Output) throws -> Int32 {
        let path = options.store
        let store = try openStore(path, readOnly: true)
        var entities: [(String, Int)] = []
        for name in try store.entityNames() {
            guard let entity = try store.entity(named: name) else { continue }
            entities.append((name, try store.recordCount(of: entity)))
        }
        let head = try store.head()
        let commits = try store.entryCount()
        let mapSize = store.mapSize
        let fileSize = store.fileSize
        let horizon = try store.read { try store.log.horizon(in: $0) }
        let subscriptions = try store.subscriptions().sorted { $0.key < $1.key }
        if options.json {
            // logHorizon: the last commit compacted into the snapshot, 0 for a log never compacted.
            let fields = [
                RecordField(name: "store", value: .string(path)),
                RecordField(name: "formatVersion", value: .uint(UInt64(Store.formatVersion))),
                RecordField(name: "logHead", value: .uint(head)),
                RecordField(name: "commits", value: .uint(UInt64(commits))),
                RecordField(name: "logHorizon", value: .uint(horizon?.sequence ?? 0)),
                RecordField(
                    name: "subscriptions",
                    value: .map(subscriptions.map { RecordField(name: $0.key, value: .uint($0.value)) })),
                RecordField(name: "mapSize", value: .uint(UInt64(mapSize))),
                RecordField(name: "fileSize", value: .uint(UInt64(fileSize))),
                RecordField(
                    name: "entities",
                    value: .map(entities.map { RecordField(name: $0.0, value: .uint(UInt64($0.1))) })),
            ]
            output.line(RecordValue.map(fields).jsonString())
            return ExitStatus.success
        }
        output.line("store:     \(path)")
        output.line("format:    \(Store.formatVersion)")
        output.line("log head:  \(head) (\(commits) commits)")
        if let horizon {
            output.line("horizon:   \(horizon.sequence) (commits up to it are compacted into a snapshot)")
        }
        for (name, sequence) in subscriptions { output.line("subscription \(name): at commit \(sequence)") }
        output.line("map size:  \(Output.byteCount(mapSize))")
        output.line("file size: \(Output.byteCount(fileSize))")
        output.line(entities.isEmpty ? "entities:  none" : "entities:")
        let width = entities.map(\.0.count).max() ?? 0
        for (name, count) in entities {
            output.line("  \(name)\(String(repeating: " ", count: width - name.count))  \(count) records")
        }
        return ExitStatus.success
    }
}
