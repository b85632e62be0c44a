import Foundation
import Rill
import RillService

/// `rill insert`, `rill update` and `rill delete`: one atomic save of JSON records given as
/// arguments, or as NDJSON on standard input — each line read as the same argument would be.
struct WriteCommand: Command {
    let operation: JSONChange.Operation

    var description: CommandDescription {
        let (abstract, item, example): (String, String, String)
        switch operation {
        case .insert:
            (abstract, item, example) = (
                "Insert records (or replace those with the same id), in one atomic save.", "record",
                #"rill insert store Book '{"id":"b1","title":"Dune","pages":412}'"#
            )
        case .update:
            (abstract, item, example) = (
                "Change fields of stored records (null removes a field), in one atomic save.", "fields",
                #"rill update store Book '{"id":"b1","isRead":true}'"#
            )
        case .delete:
            (abstract, item, example) = (
                "Delete records by id, in one atomic save.", "id", #"rill delete store Book b1 '"b2"' 42"#
            )
        }
        let uniqueness =
            operation == .delete
            ? ""
            : "\n\n"
                + """
                The entity's unique indexes (rill schema) hold: a record given with values that
                another record has for a unique index updates that record, or fails the save, as
                the index says (upsert or fail); an update onto them fails either way.
                """
        let forms =
            operation == .delete
            ? "\n\n"
                + """
                An id is a whole number, a word that is not JSON (b1), or JSON: a string ("b1",
                for an id that looks like a number or a word like true), or an object {"id":…}
                (or a change, as rill import reads), on a line as in an argument.
                """
            : ""
        return CommandDescription(
            name: operation.rawValue,
            abstract: abstract,
            arguments: WriteOptions.arguments,
            options: WriteOptions.options,
            trailing: item,
            discussion: """
                Give each \(item) as an argument after the entity, or one per line on standard
                input when there is none (NDJSON; blank lines are skipped, an error names the
                line). Every one is checked against the entity's stored records (known fields,
                kinds of values) before anything is written; any error leaves the store
                unchanged. Prints {"seq":N} (null when nothing changed).\(uniqueness)\(forms)
                """,
            examples: [example, "rill \(operation.rawValue) store Book --author import < \(item)s.ndjson"])
    }

    func run(_ options: WriteOptions, output: inout Output) throws -> Int32 {
        let store = try openStore(options.store)
        let entity = options.entity
        let items = options.items
        var values: [RecordValue] = []
        do {
            if items.isEmpty {
                // Standard input: each non-blank line is an item, read as an argument is.
                let input = FileHandle.standardInput.readDataToEndOfFile()
                var number = 0
                for line in Array(input).split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
                    number += 1
                    guard line.contains(where: { !Self.isWhitespace($0) }) else { continue }
                    do {
                        values.append(try item(line))
                    } catch {
                        var located = error
                        located.line = number
                        throw located
                    }
                }
            } else {
                for text in items { values.append(try item(Array(text.utf8)[...])) }
            }
        } catch {
            throw RillError(.invalidRecord, "\(error)")
        }
        guard !values.isEmpty else {
            throw UsageError("nothing to \(operation.rawValue): no \(operation == .delete ? "id" : "record")")
        }
        let changes = try values.enumerated().map { index, value -> JSONChange in
            do {
                switch (operation, value) {
                case (.delete, .map):
                    return try JSONChange(json: value, defaultOperation: .delete, defaultEntity: entity)
                case (.delete, _):
                    return try JSONChange(
                        json: .map([
                            RecordField(name: "op", value: .string("delete")),
                            RecordField(name: "entity", value: .string(entity)), RecordField(name: "id", value: value),
                        ]))
                default:
                    return try JSONChange(json: value, defaultOperation: operation, defaultEntity: entity)
                }
            } catch let error as RillError {
                throw RillError(error.code, (values.count > 1 ? "item \(index + 1): " : "") + error.message)
            }
        }
        output.line(try store.save(changes, author: options.author).json)
        return ExitStatus.success
    }

    /// An argument or a line of standard input: JSON, or for `delete` an id written bare.
    private func item(_ bytes: ArraySlice<UInt8>) throws(JSONReader.Error) -> RecordValue {
        if operation == .delete, let text = String(validating: bytes, as: UTF8.self),
            let id = Self.bareIdentifier(text.trimmingCharacters(in: .whitespacesAndNewlines))
        {
            return id
        }
        return try JSONReader.parse(bytes)
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// An id written bare on the command line: a whole number, or a word that is not JSON.
    static func bareIdentifier(_ text: String) -> RecordValue? {
        if let number = Int64(text) { return .int(number) }
        if let first = text.first, !"{[\"".contains(first), (try? JSONReader.parse(Array(text.utf8))) == nil {
            return .string(text)
        }
        return nil
    }
}
