import Foundation
import Rill

/// `rill query`: runs a text query against a store.
struct QueryCommand: Command {
    let description = CommandDescription(
        name: "query",
        abstract: "Run a text query against a store and print the matching records.",
        arguments: QueryOptions.arguments,
        options: QueryOptions.options,
        discussion: """
            QUERY LANGUAGE (see Documentation/QueryLanguage.md):
              <Entity> [where <predicate>] [sort by <field> [asc|desc], …] [limit <n>] [offset <n>]
              predicates: == != < <= > >=, and or not, ( ), nil, in [..], between a and b,
                          contains beginswith endswith like, each with [c] [d] [cd],
                          any <path> <test>, all <path> <test>, count(<path>), ??, + - * / %
            """
    )

    func run(_ options: QueryOptions, output: inout Output) throws -> Int32 {
        let query = options.query.query
        let store = try openStore(options.store, readOnly: true)
        if options.explain {
            guard let plan = try reportingBadQuery({ try store.explain(query) }) else { return ExitStatus.usage }
            output.line(plan)
            return ExitStatus.success
        }
        guard let rows = try reportingBadQuery({ try store.run(query) }) else { return ExitStatus.usage }
        if options.json {
            for row in rows { output.line(row.record.jsonString()) }
        } else {
            for line in RecordTable(rows.map(\.record)).render() { output.line(line) }
            output.line("(\(rows.count) \(rows.count == 1 ? "record" : "records"))")
        }
        return ExitStatus.success
    }
}
