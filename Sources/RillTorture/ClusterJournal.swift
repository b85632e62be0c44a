import Foundation
import Rill
import RillLocks

#if canImport(Glibc)
    import Glibc
#endif

/// The journal of a cluster node: one JSON line per fact, each appended with one `write(2)`
/// before the node goes on, so that a `kill -9` loses nothing the node claimed (the page cache
/// keeps what a killed process wrote). Every incarnation of the node appends to the same file,
/// starting with a `start` line.
///
/// Its lines, by `kind`: `start` (an incarnation opened its store: `incarnation`, its head in
/// `sequence`), `save` (a save acknowledged at `sequence`, with what it wrote), `refused` (a save
/// that failed typed: `code`), `initial` and `change` (a live query's first results and each
/// change, as `query`, `sequence` and rows), `idle` (saves stopped), `end` (every live query told
/// of every commit up to `sequence`), `failure` (the node stopped on an error: `message`).
package final class ClusterJournal: Sendable {
    private let descriptor: Lock<Int32>

    /// One line of the journal.
    package struct Line: Codable, Sendable {
        package var kind: String
        package var sequence: UInt64?
        package var incarnation: Int?
        package var query: Int?
        package var code: String?
        package var message: String?
        /// A save's writes: each record's identifier and the number it wrote, nil for a delete.
        package var writes: [Write]?
        /// The initial results.
        package var rows: [ClusterQuery.Row]?
        /// A change, as ``ResultsChange`` holds it.
        package var removals: [Placed]?
        package var insertions: [Placed]?
        package var moves: [Moved]?
        package var updates: [Moved]?

        package init(kind: String) { self.kind = kind }
    }

    package struct Write: Codable, Sendable, Hashable {
        package var id: String
        package var number: Int?
    }

    package struct Placed: Codable, Sendable {
        package var offset: Int
        package var row: ClusterQuery.Row
    }

    package struct Moved: Codable, Sendable {
        package var from: Int
        package var to: Int
        package var old: ClusterQuery.Row
        package var row: ClusterQuery.Row
    }

    /// Opens `path` for appending, creating it; ends a line a killed incarnation left unfinished.
    package init(path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TortureUsage("cannot open the journal \(path): errno \(errno)") }
        descriptor = Lock(fd)
        let size = lseek(fd, 0, SEEK_END)
        if size > 0 {
            let reader = open(path, O_RDONLY | O_CLOEXEC)
            var last: UInt8 = 0
            if reader >= 0 {
                _ = pread(reader, &last, 1, size - 1)
                close(reader)
            }
            if last != UInt8(ascii: "\n") { append(raw: [UInt8(ascii: "\n")]) }
        }
    }

    deinit {
        descriptor.withLock { _ = close($0) }
    }

    /// Appends `line`, whole, with one write.
    package func append(_ line: Line) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard var bytes = try? Array(encoder.encode(line)) else { return }
        bytes.append(UInt8(ascii: "\n"))
        append(raw: bytes)
    }

    private func append(raw bytes: [UInt8]) {
        descriptor.withLock { fd in
            var written = 0
            while written < bytes.count {
                let count = bytes[written...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return }
                written += count
            }
        }
    }

    // MARK: - Live queries' events

    /// The line of a live query's event; nil for one the journal does not keep (progress).
    package static func line(of event: RecordLiveQuery.Event, query: Int) -> Line? {
        switch event {
        case .initial(let rows, let sequence):
            var line = Line(kind: "initial")
            line.query = query
            line.sequence = sequence
            line.rows = rows.map(row)
            return line
        case .change(let change):
            var line = Line(kind: "change")
            line.query = query
            line.sequence = change.sequence
            line.removals = change.removals.map { Placed(offset: $0.offset, row: row($0.element)) }
            line.insertions = change.insertions.map { Placed(offset: $0.offset, row: row($0.element)) }
            line.moves = change.moves.map {
                Moved(from: $0.from, to: $0.to, old: row($0.oldElement), row: row($0.element))
            }
            line.updates = change.updates.map {
                Moved(from: $0.oldOffset, to: $0.offset, old: row($0.oldElement), row: row($0.element))
            }
            return line
        case .failed(let error):
            var line = Line(kind: "failure")
            line.query = query
            line.message = "live query \(query) failed: \(error)"
            return line
        case .progress:
            return nil
        }
    }

    /// A change line as the change it records.
    package static func change(of line: Line) -> ResultsChange<ClusterQuery.Row> {
        ResultsChange(
            sequence: line.sequence ?? 0,
            removals: (line.removals ?? []).map { .init(offset: $0.offset, element: $0.row) },
            insertions: (line.insertions ?? []).map { .init(offset: $0.offset, element: $0.row) },
            moves: (line.moves ?? []).map { .init(from: $0.from, to: $0.to, oldElement: $0.old, element: $0.row) },
            updates: (line.updates ?? []).map {
                .init(oldOffset: $0.from, offset: $0.to, oldElement: $0.old, element: $0.row)
            })
    }

    static func row(_ row: QueryRow) -> ClusterQuery.Row {
        let id: String
        if case .string(let text)? = row.key.withUnsafeBytes({ AnyIdentifier(storageKey: $0) }) {
            id = text
        } else {
            id = "\(row.key)"
        }
        let number: Int =
            switch QueryEvaluator.read(["number"], from: row.record) {
            case .int(let value): Int(value)
            case .uint(let value): Int(value)
            default: -1
            }
        return ClusterQuery.Row(id: id, number: number)
    }

    // MARK: - Reading

    /// The lines of the journal at `path`, and how many could not be read: a line a `kill -9` cut
    /// short is the only one that may not, and only just before a `start`.
    package static func read(path: String) throws -> (lines: [Line], torn: [Int]) {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        var lines: [Line] = []
        var torn: [Int] = []
        let decoder = JSONDecoder()
        for text in data.split(separator: UInt8(ascii: "\n")) {
            if let line = try? decoder.decode(Line.self, from: Data(text)) {
                lines.append(line)
            } else {
                torn.append(lines.count)
            }
        }
        return (lines, torn)
    }
}
