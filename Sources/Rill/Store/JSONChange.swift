import Foundation

/// A change given as JSON, by a program without the model types (the CLI, the daemon):
/// `{"op":"insert"|"update"|"delete","entity":"Book","id":…,"record":{…}}`.
///
/// - `insert`: the record (with its `id` field), inserted or replacing the stored one.
/// - `update`: `record` holds the fields to change (and the `id`); the others keep their stored
///   values, a field set to `null` is removed. The record must exist.
/// - `delete`: the `id` alone (or a `record` with it).
package struct JSONChange: Sendable {
    package enum Operation: String, Sendable { case insert, update, delete }

    package var operation: Operation
    package var entity: String
    package var id: RecordValue
    /// The record (insert) or the fields to change (update); nil for a delete.
    package var record: RecordValue?
    /// Where the change came from, for errors (`line 7 of books.ndjson`); nil to name it by its place among the
    /// changes of its save.
    package var source: String?
    /// Whether an insert stores the record's `null` fields as nulls, as `rill export` printed a stored record
    /// that holds them (a model whose `encode(to:)` calls `encodeNil`, a double optional), so that a model
    /// reading them with `decodeNil(forKey:)` reads them again; otherwise (the default) a `null` field is left
    /// out of the record, as synthesized `Codable` leaves out a nil.
    package var keepsNulls = false

    /// Reads a change object; `defaultOperation` and `defaultEntity` fill in what it leaves out
    /// (`rill insert store Book '{…}'` gives them on the command line).
    package init(
        json: RecordValue, defaultOperation: Operation? = nil, defaultEntity: String? = nil
    ) throws {
        guard case .map(let fields) = json else {
            throw RillError(.invalidRecord, "a change must be a JSON object")
        }
        func field(_ name: String) -> RecordValue? { fields.value(named: name) }
        let isChange = field("op") != nil || field("entity") != nil
        if isChange {
            for extra in fields {
                switch extra.name {
                case "op", "entity", "id", "record": continue
                default:
                    throw RillError(
                        .invalidRecord, "a change has no field \"\(extra.name)\" (it has op, entity, id, record)")
                }
            }
        }
        let opValue = isChange ? field("op") : nil
        switch opValue {
        case .string(let name)?:
            guard let op = Operation(rawValue: name) else {
                throw RillError(.invalidRecord, "unknown op \"\(name)\" (use insert, update or delete)")
            }
            operation = op
        case nil:
            guard let defaultOperation else { throw RillError(.invalidRecord, "a change needs \"op\"") }
            operation = defaultOperation
        default:
            throw RillError(.invalidRecord, "\"op\" must be a string")
        }
        switch isChange ? field("entity") : nil {
        case .string(let name)?: entity = name
        case nil:
            guard let defaultEntity else { throw RillError(.invalidRecord, "a change needs \"entity\"") }
            entity = defaultEntity
        default:
            throw RillError(.invalidRecord, "\"entity\" must be a string")
        }
        // Without op/entity the object is the record itself.
        let record = isChange ? field("record") : json
        if let record, record != .null {
            guard case .map(let recordFields) = record else {
                throw RillError(.invalidRecord, "\"record\" must be a JSON object")
            }
            self.record = record
            if let id = recordFields.first(where: { $0.name == "id" })?.value {
                if isChange, let given = field("id"), given != id {
                    throw RillError(.invalidRecord, "\"id\" and the record's id differ")
                }
                self.id = id
            } else if isChange, let given = field("id") {
                self.id = given
            } else {
                throw RillError(.invalidRecord, "the record has no \"id\"")
            }
        } else {
            self.record = nil
            guard isChange, let given = field("id") else { throw RillError(.invalidRecord, "a change needs \"id\"") }
            self.id = given
        }
        if operation != .delete, self.record == nil {
            throw RillError(.invalidRecord, "an \(operation.rawValue) needs \"record\"")
        }
    }
}
