import Foundation
import Rill

/// `rill get`: one record as JSON.
struct GetCommand: Command {
    let description = CommandDescription(
        name: "get",
        abstract: "Print the current record of an entity with the given identifier, as JSON.",
        arguments: GetOptions.arguments,
        options: GetOptions.options,
        examples: [
            "rill get ./books Book b1",
            "rill get --pretty ./books Book 42",
        ]
    )

    func run(_ options: GetOptions, output: inout Output) throws -> Int32 {
        let store = try openStore(options.store, readOnly: true)
        let name = options.entity
        let entity = try store.existingEntity(name)
        let text = options.id
        guard let identifier = AnyIdentifier(parsing: text, as: entity.identifierKind) else {
            throw RillError(
                .invalidIdentifier,
                "'\(text)' is not an identifier of the kind \(name) uses (\(entity.identifierKind.name))")
        }
        // A record of an earlier version prints as the current schema reads it.
        guard let record = try store.currentRecordValue(of: entity, key: identifier.storageKey) else {
            Output.error("no \(name) with id \(text)")
            return ExitStatus.failure
        }
        output.line(record.jsonString(pretty: options.pretty))
        return ExitStatus.success
    }
}
