import Foundation
import Rill
import RillWorkloads

#if canImport(Glibc)
    import Glibc
#endif

/// The writer process of the suites: `rill-torture worker writer <store> <writer> [options]`.
///
/// It saves `TortureItem`s, one save at a time, and reports each save on standard output once
/// `save()` returned, as `ack <sequence> <kind> <id>` (kind `insert`, `update` or `delete`), so
/// that the parent knows every acknowledged save even when it kills the writer a moment later.
/// Most saves insert a new item; some update or delete one of the writer's own earlier items.
///
/// Options: `--durability full|relaxed|unsynced`, `--saves N` (default: until killed),
/// `--payload MIN-MAX` (bytes, default 16-256), `--map-size BYTES`, `--seed N`, `--pause SECONDS`
/// (between saves, default 0: a suite that verifies the whole store after each fault bounds its
/// size with it).
package enum TortureWriter {
    package static func run(_ arguments: [String]) throws {
        guard arguments.count >= 2, let writer = Int(arguments[1]) else {
            throw TortureUsage("usage: rill-torture worker writer <store> <writer> [options]")
        }
        let store = arguments[0]
        let options = TortureArguments(Array(arguments.dropFirst(2)))
        let durability: ModelConfiguration.Durability =
            switch options.value("--durability") ?? "full" {
            case "relaxed": .relaxed
            case "unsynced": .unsynced
            default: .full
            }
        let saves = options.integer("--saves") ?? .max
        let payload = options.range("--payload") ?? 16...256
        let mapSize = options.integer("--map-size") ?? 64 << 20
        let pause = options.value("--pause").flatMap(Double.init) ?? 0
        var random = SeededGenerator(seed: options.integer("--seed").map { UInt64($0) } ?? UInt64(writer + 1))
        let container = try ModelContainer(
            for: TortureItem.self,
            configurations: ModelConfiguration(
                url: URL(fileURLWithPath: store), durability: durability, initialMapSize: mapSize))
        let context = ModelContext(container)
        // Resumes numbering after the items of an earlier run of the same writer.
        let mine = try context.fetch(FetchDescriptor<TortureItem>(predicate: #Predicate { $0.writer == writer }))
        var live = mine.map(\.id)
        var number = (mine.map(\.number).max() ?? -1) + 1
        var done = 0
        while done < saves {
            let roll = Int.random(in: 0..<20, using: &random)
            let kind: String
            let id: String
            if roll == 0, !live.isEmpty {
                id = live.remove(at: Int.random(in: 0..<live.count, using: &random))
                let victim = TortureItem(id: id, writer: writer, number: 0, payload: "")
                context.delete(victim)
                kind = "delete"
            } else if roll < 4, !live.isEmpty {
                id = live[Int.random(in: 0..<live.count, using: &random)]
                context.insert(
                    TortureItem(id: id, writer: writer, number: number, payload: text(in: payload, using: &random)))
                number += 1
                kind = "update"
            } else {
                id = "w\(writer)-\(number)"
                context.insert(
                    TortureItem(id: id, writer: writer, number: number, payload: text(in: payload, using: &random)))
                number += 1
                live.append(id)
                kind = "insert"
            }
            guard let sequence = try context.save() else { throw TortureUsage("a save with changes wrote no commit") }
            report("ack \(sequence) \(kind) \(id)")
            done += 1
            if pause > 0 { usleep(UInt32(pause * 1_000_000)) }
        }
    }

    /// Writes one line to standard output at once (no buffer a kill could lose).
    static func report(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        bytes.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = write(1, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }

    static func text(in lengths: ClosedRange<Int>, using random: inout SeededGenerator) -> String {
        let count = Int.random(in: lengths, using: &random)
        return String((0..<count).map { _ in Character(UnicodeScalar(UInt8.random(in: 97...122, using: &random))) })
    }

    /// Reads the `ack` lines of a writer: each as the acknowledged save it names.
    package static func acknowledged(_ line: some StringProtocol) -> AcknowledgedSave? {
        let fields = line.split(separator: " ")
        guard fields.count == 4, fields[0] == "ack", let sequence = UInt64(fields[1]) else { return nil }
        let key = AnyIdentifier.string(String(fields[3])).storageKey
        return AcknowledgedSave(
            sequence: sequence,
            changes: [.init(entity: TortureItem.entityName, key: key, isDelete: fields[2] == "delete")])
    }
}

/// A usage error of `rill-torture`.
package struct TortureUsage: Error, CustomStringConvertible {
    package var description: String
    package init(_ description: String) { self.description = description }
}

/// The `--name value` options of a worker or suite.
package struct TortureArguments {
    private var values: [String: String] = [:]

    package init(_ arguments: [String]) {
        var index = 0
        while index < arguments.count {
            let name = arguments[index]
            if name.hasPrefix("--"), index + 1 < arguments.count {
                values[name] = arguments[index + 1]
                index += 2
            } else {
                index += 1
            }
        }
    }

    package func value(_ name: String) -> String? { values[name] }
    package func integer(_ name: String) -> Int? { values[name].flatMap { Int($0) } }
    package func range(_ name: String) -> ClosedRange<Int>? {
        guard let text = values[name] else { return nil }
        let parts = text.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 2, parts[0] <= parts[1] else { return nil }
        return parts[0]...parts[1]
    }
}
