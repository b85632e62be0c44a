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

            --as-of reads the results as they were after a commit (a sequence number) or at a date
            (ISO 8601: the last commit made at or before it; 0, the empty store, before the first),
            with the query's sort, limit and offset. Its cost follows how far back it reaches.

            --csv prints a header row of the columns the table shows (the records' top-level fields,
            in order of first appearance), then a row per record, with CRLF line ends. A field with
            a comma, a double quote, a CR or an LF is quoted, its quotes doubled; an empty string is
            "", a null or missing field empty. Strings, dates, UUIDs and data (base64) are their
            text; numbers, booleans, nested values and arrays their JSON text.

            The table shows a newline in a value as ⏎, and any other control character or
            bidirectional control as its escape (\\u{1B} for ESC, \\u{202E} for a right-to-left
            override), so that no stored text steers the terminal; --json and --csv print values
            exactly. Columns are measured in terminal cells (a wide character takes two).
            """,
        examples: [
            "rill query ./books 'Book where pages > 300 sort by title limit 10'",
            #"rill query --json ./books 'Book where title contains[c] "dune"'"#,
            "rill query --csv ./books 'Book sort by pages desc' > books.csv",
            "rill query --as-of 2026-01-01T00:00:00Z ./books 'Book'",
            "rill query --explain ./books 'Book where pages > 300'",
        ]
    )

    func run(_ options: QueryOptions, output: inout Output) throws -> Int32 {
        let query = options.query.query
        let store = try openStore(options.store, readOnly: true)
        if options.explain {
            guard let plan = try reportingBadQuery({ try store.explain(query) }) else { return ExitStatus.usage }
            output.line(plan)
            return ExitStatus.success
        }
        var rows: [QueryRow]
        var asOf: UInt64?
        if let position = options.asOf {
            guard let past = try reportingBadQuery({ try store.run(query, asOf: position) }) else {
                return ExitStatus.usage
            }
            (rows, asOf) = (past.rows, past.sequence)
        } else {
            guard let current = try reportingBadQuery({ try store.run(query) }) else { return ExitStatus.usage }
            rows = current
        }
        if options.json {
            for row in rows { output.line(row.record.jsonString()) }
        } else if options.csv {
            let csv = RecordCSV(rows.map(\.record))
            output.write(csv.header())
            for row in rows { output.write(csv.row(row.record)) }
        } else {
            for line in RecordTable(rows.map(\.record)).render() { output.line(line) }
            let count = "\(rows.count) \(rows.count == 1 ? "record" : "records")"
            output.line(asOf.map { "(\(count) as of commit \($0))" } ?? "(\(count))")
        }
        return ExitStatus.success
    }
}
