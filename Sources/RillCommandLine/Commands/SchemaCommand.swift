import Rill
import RillService

/// `rill schema`: what the store knows of its entities' fields.
struct SchemaCommand: Command {
    let description = CommandDescription(
        name: "schema",
        abstract: "Print the schema of a store's entities: each field's kind, which are optional, the indexes.",
        arguments: SchemaOptions.arguments,
        options: SchemaOptions.options,
        trailing: "entity",
        discussion: """
            A model type registers its schema when a container opens the store: the fields its
            init(from:) reads, their kinds (int, uint, double, float, decimal, date, uuid, url,
            data, string, bool; [kind] for an array, {…} for a struct, any when not known), which
            are optional (marked ?), and its indexes. The version goes up by one each time a
            model type registers a schema not registered before (an older writer opening the
            store again changes nothing). rill check holds every record to the current schema. Then
            the unique indexes the store enforces on every write, each with what an insert of values
            another record has does: upsert (it updates that record) or fail. An entity no model type registered (one
            made by rill import) shows the fields its description declared or its records hold;
            rill check holds its records to the declared kinds.
            Writes given as JSON and text queries are checked against these kinds.
            """,
        examples: [
            "rill schema ./books",
            "rill schema --json ./books Book",
        ]
    )

    func run(_ options: SchemaOptions, output: inout Output) throws -> Int32 {
        let store = try openStore(options.store, readOnly: true)
        let entities =
            options.entities.isEmpty
            ? try SchemaDescription.entities(of: store)
            : try options.entities.flatMap { try SchemaDescription.entities(of: store, named: $0) }
        if options.json {
            output.line(SchemaDescription.json(entities).jsonString())
        } else {
            for line in SchemaDescription.lines(entities) { output.line(line) }
            if entities.isEmpty { output.line("no entities") }
        }
        return ExitStatus.success
    }
}
