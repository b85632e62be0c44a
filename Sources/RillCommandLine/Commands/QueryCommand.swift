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
