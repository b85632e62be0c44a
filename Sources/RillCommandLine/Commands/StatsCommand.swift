import Foundation
import Rill
import RillClient

/// `rill stats`: what a store holds and how big it is.
struct StatsCommand: Command {
    let description = CommandDescription(
        name: "stats",
        abstract: "Print a store's entities with their record counts, the log head, and its sizes.",
        arguments: StatsOptions.arguments,
        options: StatsOptions.options,
        discussion: """
            With --url, also the figures of the daemon that serves the store, from its GET
            /metrics: saves, commits, live queries, subscribers, the follower's lag, connections
            and refused requests (Documentation/Operations.md). With --json they are under
            "daemon", each sample by its name and labels.
            """,
        examples: [
            "rill stats ./books",
            "rill stats --json ./books",
            "rill stats ./books --url ./books",
            "rill stats ./books --url http://127.0.0.1:8080 --token-file ./token",
        ]
    )

    func run(_ options: StatsOptions, output: inout Output) throws -> Int32 {
        let path = options.store
        let store = try openStore(path, readOnly: true)
        var entities: [(String, Int)] = []
        var entityBytes: [Int] = []
        for name in try store.entityNames() {
            guard let entity = try store.entity(named: name) else { continue }
            entities.append((name, try store.recordCount(of: entity)))
            entityBytes.append(try store.recordByteCount(of: entity))
        }
        let logBytes = try store.logByteCount()
        // Read before anything is printed: a daemon that cannot be read fails the command whole.
        let daemon = try options.daemon.map {
            try MetricsClient(address: $0, token: ServeCommand.token(file: options.tokenFile)).samples()
        }
        let head = try store.head()
        let commits = try store.entryCount()
        let mapSize = store.mapSize
        let fileSize = store.fileSize
        let horizon = try store.read { try store.log.horizon(in: $0) }
        let subscriptions = try store.subscriptions().sorted { $0.key < $1.key }
        if options.json {
            // logHorizon: the last commit compacted into the snapshot, 0 for a log never compacted.
            let fields =
                [
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
                    RecordField(name: "logSize", value: .uint(UInt64(logBytes))),
                    RecordField(
                        name: "entities",
                        value: .map(entities.map { RecordField(name: $0.0, value: .uint(UInt64($0.1))) })),
                    RecordField(
                        name: "entitySizes",
                        value: .map(
                            zip(entities, entityBytes).map { RecordField(name: $0.0.0, value: .uint(UInt64($0.1))) })),
                ] + (daemon.map { [RecordField(name: "daemon", value: Self.json(of: $0))] } ?? [])
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
        output.line("log size:  \(Output.byteCount(logBytes))")
        output.line(entities.isEmpty ? "entities:  none" : "entities:")
        let width = entities.map(\.0.count).max() ?? 0
        for ((name, count), bytes) in zip(entities, entityBytes) {
            output.line(
                "  \(name)\(String(repeating: " ", count: width - name.count))  \(count) records, "
                    + Output.byteCount(bytes))
        }
        if let daemon, let address = options.daemon {
            for line in Self.lines(of: daemon, from: "\(address)") { output.line(line) }
        }
        return ExitStatus.success
    }
}
