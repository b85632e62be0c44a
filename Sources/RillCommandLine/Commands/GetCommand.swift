import Foundation
import Rill

/// `rill get`: one record as JSON.
struct GetCommand: Command {
    let description = CommandDescription(
        name: "get",
        abstract: "Print the current record of an entity with the given identifier, as JSON.",
        arguments: [
            .init(name: "store", help: "The store directory."),
            .init(name: "entity", help: "The entity name (the model type's name, e.g. Book)."),
            .init(name: "id", help: "The identifier: a number, a string or a UUID, as the entity uses."),
        ],
        options: [.init(name: "pretty", help: "Indent the JSON.")]
    )

    func run(_ arguments: ParsedArguments, output: inout Output) throws -> Int32 {
        let store = try openStore(arguments.positionals[0], readOnly: true)
        let name = arguments.positionals[1]
        let entity = try store.existingEntity(name)
        let text = arguments.positionals[2]
        guard let identifier = AnyIdentifier(parsing: text, as: entity.identifierKind) else {
            throw RillError(
                .invalidIdentifier, "'\(text)' is not a \(entity.identifierKind.name) identifier, as \(name) uses")
        }
        guard let record = try store.record(of: entity, key: identifier.storageKey) else {
            Output.error("no \(name) with id \(text)")
            return ExitStatus.failure
        }
        output.line(try LogEntry.recordValue(record).jsonString(pretty: arguments.has("pretty")))
        return ExitStatus.success
    }
}
