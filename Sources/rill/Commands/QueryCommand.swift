import Foundation
import Rill

/// `rill query`: runs a text query against a store.
struct QueryCommand: Command {
    let description = CommandDescription(
        name: "query",
        abstract: "Run a text query against a store and print the matching records.",
        arguments: [
            .init(name: "store", help: "The store directory."),
            .init(name: "query", help: "A query, e.g. 'Book where pages > 300 sort by title limit 10'."),
        ],
        options: [
            .init(name: "json", help: "Print one JSON object per record (NDJSON) instead of a table."),
            .init(name: "explain", help: "Print how the query would run instead of its results."),
        ],
        discussion: """
            QUERY LANGUAGE (see Documentation/QueryLanguage.md):
              <Entity> [where <predicate>] [sort by <field> [asc|desc], …] [limit <n>] [offset <n>]
              predicates: == != < <= > >=, and or not, ( ), nil, in [..], between a and b,
                          contains beginswith endswith like, each with [c] [d] [cd],
                          any <path> <test>, all <path> <test>, count(<path>), ??, + - * / %
            """
    )

    func run(_ arguments: ParsedArguments, output: inout Output) throws -> Int32 {
        guard let query = parseQueryArgument(arguments.positionals[1]) else { return ExitStatus.usage }
        let store = try openStore(arguments.positionals[0], readOnly: true)
        if arguments.has("explain") {
            guard let plan = try reportingBadQuery({ try store.explain(query) }) else { return ExitStatus.usage }
            output.line(plan)
            return ExitStatus.success
        }
        guard let rows = try reportingBadQuery({ try store.run(query) }) else { return ExitStatus.usage }
        if arguments.has("json") {
            for row in rows { output.line(row.record.jsonString()) }
        } else {
            for line in RecordTable(rows.map(\.record)).render() { output.line(line) }
            output.line("(\(rows.count) \(rows.count == 1 ? "record" : "records"))")
        }
        return ExitStatus.success
    }
}

/// The query text of a command line, or nil after saying on standard error what is wrong with it
/// (the command then exits with the usage status).
func parseQueryArgument(_ text: String) -> Query? {
    do {
        return try QueryParser.parse(text)
    } catch {
        Output.error("bad query\n\(error)")
        return nil
    }
}

/// The result of `body`, or nil after saying on standard error, as for a query that does not
/// parse, that the query does not fit its entity's fields (`Store.check`); the command then exits
/// with the usage status.
func reportingBadQuery<T>(_ body: () throws -> T) throws -> T? {
    do {
        return try body()
    } catch let error as RillError where error.code == .unknownField || error.code == .kindMismatch {
        Output.error("bad query\n\(error.underlyingError.map { "\($0)" } ?? error.message)")
        return nil
    }
}

/// Records as a plain-text table: a column per top-level field, in order of first appearance.
struct RecordTable {
    var records: [RecordValue]
    var maximumWidth = 40

    init(_ records: [RecordValue]) { self.records = records }

    func render() -> [String] {
        var columns: [String] = []
        var seen: Set<String> = []
        for case .map(let fields) in records {
            for field in fields where seen.insert(field.name).inserted { columns.append(field.name) }
        }
        guard !columns.isEmpty else { return [] }
        let cells: [[String]] = records.map { record in
            columns.map { column in
                guard case .map(let fields) = record, let value = fields.first(where: { $0.name == column })?.value
                else { return "" }
                return clip(Self.cell(value))
            }
        }
        let widths = columns.indices.map { index in
            max(columns[index].count, cells.map { $0[index].count }.max() ?? 0)
        }
        func line(_ values: [String]) -> String {
            var line = zip(values, widths).map { $0.padding(toLength: $1, withPad: " ", startingAt: 0) }
                .joined(separator: "  ")
            // No trailing blanks (a regular expression here cost a table more than its cells).
            while let last = line.last, last.isWhitespace { line.removeLast() }
            return line
        }
        return [line(columns), line(widths.map { String(repeating: "─", count: $0) })] + cells.map(line)
    }

    private func clip(_ text: String) -> String {
        text.count <= maximumWidth ? text : String(text.prefix(maximumWidth - 1)) + "…"
    }

    private static func cell(_ value: RecordValue) -> String {
        switch value {
        case .null: "nil"
        case .string(let s), .url(let s): s.replacingOccurrences(of: "\n", with: "⏎")
        default: value.jsonString()
        }
    }
}
