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
/// Most changes insert a new item; some update or delete one of the writer's own earlier items.
/// With `--batch N` each save makes N changes, to N different items, and its line names each:
/// `ack <sequence> <kind> <id> <kind> <id> …`.
///
/// Options: `--durability full|relaxed|unsynced`, `--saves N` (default: until killed), `--batch N`,
/// `--payload MIN-MAX` (bytes, default 16-256), `--map-size BYTES`, `--seed N`, `--pause SECONDS`
/// (between saves, default 0: a suite that verifies the whole store after each fault bounds its
/// size with it), and `--after-error N`: a failed save is reported as `error <code> <message>` and undone in the
/// context (`rollback()`), and the writer stops N saves after the first failed one, whether those
/// fail or not (by default it stops at the first, throwing its error). A payload range up to a
/// mebibyte or more is fine: large items make the map grow. `--payload-spread log` draws payload
/// sizes log-uniformly from the range (as many items of 100 B–1 KiB as of 100 KiB–1 MiB) instead
/// of uniformly; `--until-size BYTES` stops once `data.mdb` is that large.
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
        let batch = max(1, options.integer("--batch") ?? 1)
        let payload = options.range("--payload") ?? 16...256
        let mapSize = options.integer("--map-size") ?? 64 << 20
        let pause = options.value("--pause").flatMap(Double.init) ?? 0
        let savesAfterError = options.integer("--after-error")
        let logSpread = options.value("--payload-spread") == "log"
        let untilSize = options.integer("--until-size")
        var firstError: Int?
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
        var attempted = 0
        let dataFile = URL(fileURLWithPath: store).appendingPathComponent("data.mdb").path
        while done < saves {
            if let untilSize, fileSize(dataFile) >= untilSize { return }
            if let firstError, let savesAfterError, attempted - firstError >= savesAfterError { return }
            attempted += 1
            var changes: [(kind: String, id: String)] = []
            var touched: Set<String> = []
            for _ in 0..<batch {
                let roll = Int.random(in: 0..<20, using: &random)
                let candidates = live.indices.filter { !touched.contains(live[$0]) }
                let kind: String
                let id: String
                if roll == 0, let victim = candidates.randomElement(using: &random) {
                    id = live.remove(at: victim)
                    context.delete(TortureItem(id: id, writer: writer, number: 0, payload: ""))
                    kind = "delete"
                } else if roll < 4, let chosen = candidates.randomElement(using: &random) {
                    id = live[chosen]
                    context.insert(
                        TortureItem(
                            id: id, writer: writer, number: number,
                            payload: text(in: payload, logSpread: logSpread, using: &random)))
                    number += 1
                    kind = "update"
                } else {
                    id = "w\(writer)-\(number)"
                    context.insert(
                        TortureItem(
                            id: id, writer: writer, number: number,
                            payload: text(in: payload, logSpread: logSpread, using: &random)))
                    number += 1
                    live.append(id)
                    kind = "insert"
                }
                touched.insert(id)
                changes.append((kind, id))
            }
            let sequence: UInt64?
            do {
                sequence = try context.save()
            } catch let error as RillError where savesAfterError != nil {
                report("error \(error.code) \(error.message.split(whereSeparator: \.isNewline).joined(separator: " "))")
                context.rollback()
                for change in changes {
                    if change.kind == "insert" { live.removeAll { $0 == change.id } }
                    if change.kind == "delete" { live.append(change.id) }
                }
                firstError = firstError ?? attempted
                continue
            }
            guard let sequence else { throw TortureUsage("a save with changes wrote no commit") }
            report("ack \(sequence) \(changes.map { "\($0.kind) \($0.id)" }.joined(separator: " "))")
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

    /// A payload of random lowercase letters, its length drawn from `lengths`: uniformly, or
    /// log-uniformly when `logSpread` is set.
    static func text(
        in lengths: ClosedRange<Int>, logSpread: Bool = false, using random: inout SeededGenerator
    ) -> String {
        let count: Int
        if logSpread, lengths.lowerBound > 0 {
            let (low, high) = (log(Double(lengths.lowerBound)), log(Double(lengths.upperBound)))
            count = min(lengths.upperBound, Int(exp(Double.random(in: low...high, using: &random))))
        } else {
            count = Int.random(in: lengths, using: &random)
        }
        // Eight letters from each random word: payloads of a mebibyte are made in milliseconds.
        var bytes = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            var word = random.next()
            for _ in 0..<min(8, count - index) {
                bytes[index] = 97 + UInt8(word % 26)
                word >>= 8
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The size of the file at `path`, 0 when it is missing.
    static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }

    /// The saves a writer acknowledged in `output`, all it printed before it was killed: its
    /// complete lines only. A kill can cut a line short (a write to a file stops at a page's end
    /// once a fatal signal is pending), and `ack 821 insert w1` cut from `ack 821 insert w1-37`
    /// would name another record.
    package static func acknowledged(inOutput output: String) -> [AcknowledgedSave] {
        var lines = output.split(separator: "\n", omittingEmptySubsequences: false)
        // What follows the last newline is a line the writer did not finish (or nothing).
        lines.removeLast()
        return lines.compactMap(acknowledged)
    }

    /// Reads the `ack` lines of a writer: each as the acknowledged save it names.
    package static func acknowledged(_ line: some StringProtocol) -> AcknowledgedSave? {
        let fields = line.split(separator: " ")
        guard fields.count >= 4, fields.count % 2 == 0, fields[0] == "ack", let sequence = UInt64(fields[1]) else {
            return nil
        }
        let changes = stride(from: 2, to: fields.count, by: 2).map { index in
            AcknowledgedSave.Change(
                entity: TortureItem.entityName, key: AnyIdentifier.string(String(fields[index + 1])).storageKey,
                isDelete: fields[index] == "delete")
        }
        return AcknowledgedSave(sequence: sequence, changes: changes)
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
