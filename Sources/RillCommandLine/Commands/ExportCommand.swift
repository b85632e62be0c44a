import Foundation
import Rill

/// `rill export`: every record of a store (or of some entities) as NDJSON, each entity preceded
/// by a line describing it, so that `rill import` can rebuild the store elsewhere.
struct ExportCommand: Command {
    let description = CommandDescription(
        name: "export",
        abstract: "Print every record as NDJSON, each entity preceded by its description (for rill import).",
        arguments: ExportOptions.arguments,
        options: ExportOptions.options,
        trailing: "entity",
        discussion: """
            Lines: {"entity":"Book","identifier":"String","indexes":["author,title"],"fields":{…}}
            for each entity (its identifier kind, indexes and the kinds of its fields: those its
            description declared, then those any of its records show; "unique":{"isbn":"upsert"}
            for its unique indexes, each with what an insert of values another record has does:
            upsert or fail), then one
            {"op":"insert","entity":"Book","record":{…}} per record. Everything is read in one
            snapshot. On a terminal, a progress bar shows on standard error after a second.
            """,
        examples: [
            "rill export ./books > books.ndjson",
            "rill export ./books Book Author",
        ]
    )

    func run(_ options: ExportOptions, output: inout Output) throws -> Int32 {
        let store = try openStore(options.store, readOnly: true)
        var names = options.entities
        let known = try store.entityNames()
        if names.isEmpty { names = known }
        var entities: [EntityStorage] = []
        for name in names {
            entities.append(try store.existingEntity(name))
        }
        let total = try entities.reduce(0) { $0 + (try store.recordCount(of: $1)) }
        var progress = Progress(verb: "exported", total: total)
        try store.read { txn in
            for entity in entities {
                var description = [
                    RecordField(name: "entity", value: .string(entity.name)),
                    RecordField(name: "identifier", value: .string(entity.identifierKind.name)),
                    RecordField(name: "indexes", value: .array(entity.indexes.map { .string($0.name) })),
                    RecordField(
                        name: "fields",
                        value: try store.recordShape(
                            of: entity, learned: RecordShape.learn(from: entity, in: txn, limit: nil)
                        ).jsonValue),
                ]
                let unique = entity.indexes.compactMap { index in
                    index.uniqueness.map { RecordField(name: index.name, value: .string($0.rawValue)) }
                }
                if !unique.isEmpty { description.append(RecordField(name: "unique", value: .map(unique))) }
                let header = RecordValue.map(description)
                output.line(header.jsonString())
                try txn.forEachRecord(of: entity) { key, bytes in
                    let record = try Store.recordValue(bytes, key: key, entity: entity.name)
                    output.line(
                        RecordValue.map([
                            RecordField(name: "op", value: .string("insert")),
                            RecordField(name: "entity", value: .string(entity.name)),
                            RecordField(name: "record", value: record),
                        ]).jsonString())
                    progress.advance()
                    return true
                }
            }
        }
        progress.finish()
        return ExitStatus.success
    }
}
