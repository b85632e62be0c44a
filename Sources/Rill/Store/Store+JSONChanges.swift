import Foundation
import RillStorage

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

    /// Reads a change object; `defaultOperation` and `defaultEntity` fill in what it leaves out
    /// (`rill insert store Book '{…}'` gives them on the command line).
    package init(
        json: RecordValue, defaultOperation: Operation? = nil, defaultEntity: String? = nil
    ) throws {
        guard case .map(let fields) = json else {
            throw RillError(.invalidRecord, "a change must be a JSON object")
        }
        func field(_ name: String) -> RecordValue? { fields.first { $0.name == name }?.value }
        let isChange = field("op") != nil || field("entity") != nil
        if isChange {
            for extra in fields where !["op", "entity", "id", "record"].contains(extra.name) {
                throw RillError(
                    .invalidRecord, "a change has no field \"\(extra.name)\" (it has op, entity, id, record)")
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

extension Store {
    /// Turns JSON changes into changes ready to save: the entity must exist, identifiers must be
    /// of the entity's kind, and record fields must be ones its records have, with values of
    /// their kinds (JSON numbers, strings and so on are converted to the stored kinds: a number
    /// to a floating-point field, an ISO-8601 string to a date, a string to a UUID, base64 to
    /// data).
    ///
    /// What records have is learned from up to 64 stored records of the entity; an entity with
    /// no record yet takes the shape `declaredShapes` gives it (an import's), or any fields.
    ///
    /// - Throws: `RillError(.unknownEntity)` or `RillError(.invalidRecord)` naming the change
    ///   (its 1-based position) and the problem.
    package func prepare(
        _ changes: [JSONChange], declaredShapes: [String: RecordShape] = [:]
    ) throws -> [PreparedChange] {
        var shapes: [String: (EntityStorage, RecordShape, fresh: Bool)] = [:]
        var prepared: [PreparedChange] = []
        prepared.reserveCapacity(changes.count)
        for (index, change) in changes.enumerated() {
            let place = changes.count > 1 ? "change \(index + 1): " : ""
            do {
                var (entity, shape, fresh): (EntityStorage, RecordShape, Bool)
                if let known = shapes[change.entity] {
                    (entity, shape, fresh) = known
                } else {
                    guard let found = try self.entity(named: change.entity) else {
                        let names = try entityNames()
                        throw RillError(
                            .unknownEntity,
                            "the store has no entity \(change.entity)"
                                + (names.isEmpty ? "" : " (it has: \(names.joined(separator: ", ")))"))
                    }
                    (entity, shape, fresh) = (
                        found, try recordShape(of: found, declared: declaredShapes, fresh: false), false
                    )
                    shapes[change.entity] = (entity, shape, fresh)
                }
                let key = try Self.identifierKey(change.id, kind: entity.identifierKind, entity: entity.name)
                func conformed(dropNulls: Bool) throws -> RecordValue {
                    do {
                        return try shape.conform(change.record!, entity: entity.name, dropNulls: dropNulls)
                    } catch let error as RillError where error.code == .invalidRecord && !fresh {
                        // Records may have gained fields since the shape was learned: learn it again.
                        (shape, fresh) = (try recordShape(of: entity, declared: declaredShapes, fresh: true), true)
                        shapes[change.entity] = (entity, shape, fresh)
                        return try shape.conform(change.record!, entity: entity.name, dropNulls: dropNulls)
                    }
                }
                switch change.operation {
                case .delete:
                    prepared.append(PreparedChange(entity: entity, key: key, operation: .delete))
                case .insert:
                    let record = try conformed(dropNulls: true)
                    prepared.append(PreparedChange(entity: entity, key: key, operation: .upsert(record.recordBytes())))
                case .update:
                    guard case .map(let fields) = try conformed(dropNulls: false) else {
                        throw RillError(.invalidRecord, "not an object")
                    }
                    prepared.append(PreparedChange(entity: entity, key: key, operation: .update(fields)))
                }
            } catch let error as RillError {
                throw RillError(error.code, place + error.message, underlyingError: error.underlyingError)
            }
        }
        return prepared
    }

    /// The shape of `entity`'s records: remembered from an earlier save unless `fresh`, else
    /// learned from stored records (and remembered once there are some), else `declared`.
    /// What writes given as JSON and text queries (`check(_:)`) both take an entity to have.
    package func recordShape(
        of entity: EntityStorage, declared: [String: RecordShape], fresh: Bool
    ) throws -> RecordShape {
        if !fresh, let known = recordShapes.withLock({ $0[entity.name] }) { return known }
        let learned = try RecordShape.learn(from: entity, in: self)
        if case .any = learned { return declared[entity.name] ?? .any }
        recordShapes.withLock { $0[entity.name] = learned }
        return learned
    }

    /// The storage key of an identifier given as JSON.
    package static func identifierKey(_ id: RecordValue, kind: IdentifierKind, entity: String) throws -> [UInt8] {
        switch (kind, id) {
        case (.integer, .int(let value)): return value.storageKey
        case (.string, .string(let value)):
            let key = value.storageKey
            guard key.count <= 511 else {
                throw RillError(.invalidIdentifier, "the \(entity) id is longer than a key can be (511 bytes)")
            }
            return key
        case (.uuid, .string(let text)):
            guard let uuid = UUID(uuidString: text) else {
                throw RillError(.invalidRecord, "the \(entity) id \"\(text)\" is not a UUID")
            }
            return uuid.storageKey
        default:
            throw RillError(
                .invalidRecord,
                "a \(entity) id must be \(kind == .integer ? "an integer" : "a string"); got \(id.jsonString())"
            )
        }
    }
}

/// What the records of an entity look like, learned from stored ones: each field's kind.
package indirect enum RecordShape: Sendable {
    /// Nothing known: any value goes.
    case any
    /// A scalar of the kind of this example value.
    case scalar(RecordValue)
    case array(RecordShape)
    /// A struct or dictionary: known fields in stored order.
    case map([(name: String, shape: RecordShape)])

    package static func learn(from entity: EntityStorage, in store: Store) throws -> RecordShape {
        var shape: RecordShape?
        try store.read { txn in
            try txn.withCursor(entity.database) { cursor in
                var current = try cursor.first()
                var count = 0
                while let entry = current, count < 64 {
                    let value = try Store.recordValue(entry.value, key: entry.key, entity: entity.name)
                    shape = shape.map { $0.merged(with: RecordShape(value)) } ?? RecordShape(value)
                    count += 1
                    current = try cursor.next()
                }
            }
        }
        return shape ?? .any
    }

    init(_ value: RecordValue) {
        switch value {
        case .null: self = .any
        case .array(let elements):
            self = .array(elements.map(RecordShape.init).reduce(nil) { $0?.merged(with: $1) ?? $1 } ?? .any)
        case .map(let fields): self = .map(fields.map { ($0.name, RecordShape($0.value)) })
        default: self = .scalar(value)
        }
    }

    func merged(with other: RecordShape) -> RecordShape {
        switch (self, other) {
        case (.any, _): return other
        case (_, .any): return self
        case (.array(let a), .array(let b)): return .array(a.merged(with: b))
        case (.map(let a), .map(let b)):
            var fields = a
            for field in b {
                if let index = fields.firstIndex(where: { $0.name == field.name }) {
                    fields[index].shape = fields[index].shape.merged(with: field.shape)
                } else {
                    fields.append(field)
                }
            }
            return .map(fields)
        default: return self
        }
    }

    /// `value` in the stored kinds of this shape; top-level fields must be known ones.
    func conform(_ value: RecordValue, entity: String, dropNulls: Bool) throws -> RecordValue {
        try conform(value, path: [], entity: entity, dropNulls: dropNulls)
    }

    private func conform(_ value: RecordValue, path: [String], entity: String, dropNulls: Bool) throws -> RecordValue {
        func fail(_ expected: String) -> RillError {
            let field = path.isEmpty ? "the record" : "field \(path.joined(separator: "."))"
            return RillError(
                .invalidRecord, "\(field) of \(entity) must be \(expected); got \(value.jsonString())")
        }
        if value == .null { return .null }
        switch self {
        case .any:
            return value
        case .array(let element):
            guard case .array(let elements) = value else { throw fail("an array") }
            return .array(
                try elements.enumerated().map {
                    try element.conform($1, path: path + ["\($0)"], entity: entity, dropNulls: dropNulls)
                })
        case .map(let known):
            guard case .map(let fields) = value else { throw fail("an object") }
            var out: [RecordField] = []
            // Known fields in stored order, then the others (the keys of a dictionary).
            for field in known {
                guard let given = fields.first(where: { $0.name == field.name }) else { continue }
                let conformed = try field.shape.conform(
                    given.value, path: path + [field.name], entity: entity, dropNulls: dropNulls)
                if conformed == .null, dropNulls { continue }
                out.append(RecordField(name: field.name, value: conformed))
            }
            for field in fields where !known.contains(where: { $0.name == field.name }) {
                guard !path.isEmpty || known.isEmpty else {
                    throw RillError(
                        .invalidRecord,
                        "\(entity) has no field \"\(field.name)\" (it has: \(known.map(\.name).joined(separator: ", ")))"
                    )
                }
                if field.value == .null, dropNulls { continue }
                out.append(field)
            }
            return .map(out)
        case .scalar(let example):
            switch (example, value) {
            case (.bool, .bool), (.int, .int), (.string, .string): return value
            case (.int, _): throw fail("an integer")
            case (.uint, .int(let v)) where v >= 0: return .uint(UInt64(v))
            case (.uint, .uint): return value
            case (.uint, _): throw fail("a non-negative integer")
            case (.double, .int(let v)): return .double(Double(v))
            case (.double, .uint(let v)): return .double(Double(v))
            case (.double, .double): return value
            case (.float, .int(let v)): return .float(Float(v))
            case (.float, .double(let v)): return .float(Float(v))
            case (.double, _), (.float, _): throw fail("a number")
            case (.date, .string(let text)):
                guard let date = Self.date(text) else { throw fail("an ISO-8601 date") }
                return .date(date)
            case (.date, .int(let v)): return .date(Date(timeIntervalSince1970: Double(v)))
            case (.date, .double(let v)): return .date(Date(timeIntervalSince1970: v))
            case (.date, _): throw fail("an ISO-8601 date")
            case (.uuid, .string(let text)):
                guard let uuid = UUID(uuidString: text) else { throw fail("a UUID") }
                return .uuid(uuid)
            case (.uuid, _): throw fail("a UUID")
            case (.data, .string(let text)):
                guard let data = Data(base64Encoded: text) else { throw fail("base64 data") }
                return .data(data)
            case (.data, _): throw fail("base64 data")
            case (.url, .string(let text)): return .url(text)
            case (.url, _): throw fail("a URL string")
            case (.decimal, .int(let v)): return .decimal(String(v))
            case (.decimal, .uint(let v)): return .decimal(String(v))
            case (.decimal, .double(let v)): return .decimal(String(v))
            case (.decimal, .string(let text)) where Decimal(string: text) != nil: return .decimal(text)
            case (.decimal, _): throw fail("a decimal number")
            case (.bool, _): throw fail("true or false")
            case (.string, _): throw fail("a string")
            default: return value
            }
        }
    }

    private static func date(_ text: String) -> Date? {
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = fractional.date(from: text) { return date }
        let plain = ISO8601DateFormatter()
        plain.formatOptions = [.withInternetDateTime]
        if let date = plain.date(from: text) { return date }
        let day = ISO8601DateFormatter()
        day.formatOptions = [.withFullDate]
        return day.date(from: text)
    }
}

extension RecordShape {
    /// The shape as JSON, for an export: each field's kind by name (`"int"`, `"double"`,
    /// `"string"`, `"date"`, `"uuid"`, `"data"`, `"url"`, `"decimal"`, `"bool"`, `"uint"`,
    /// `"float"`, `"any"`), an array as `[kind]`, a struct as an object.
    package var jsonValue: RecordValue {
        switch self {
        case .any: .string("any")
        case .array(let element): .array([element.jsonValue])
        case .map(let fields): .map(fields.map { RecordField(name: $0.name, value: $0.shape.jsonValue) })
        case .scalar(let example): .string(Self.kindName(example))
        }
    }

    private static func kindName(_ example: RecordValue) -> String {
        switch example {
        case .bool: "bool"
        case .int: "int"
        case .uint: "uint"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .uuid: "uuid"
        case .url: "url"
        case .decimal: "decimal"
        default: "any"
        }
    }

    /// The shape of `jsonValue`; nil for something else.
    package init?(json: RecordValue) {
        switch json {
        case .string(let kind):
            let examples: [String: RecordValue] = [
                "bool": .bool(false), "int": .int(0), "uint": .uint(0), "float": .float(0), "double": .double(0),
                "string": .string(""), "data": .data(Data()), "date": .date(Date(timeIntervalSince1970: 0)),
                "uuid": .uuid(UUID()), "url": .url(""), "decimal": .decimal("0"),
            ]
            if kind == "any" {
                self = .any
            } else if let example = examples[kind] {
                self = .scalar(example)
            } else {
                return nil
            }
        case .array(let elements):
            guard elements.count == 1, let element = RecordShape(json: elements[0]) else { return nil }
            self = .array(element)
        case .map(let fields):
            var shapes: [(name: String, shape: RecordShape)] = []
            for field in fields {
                guard let shape = RecordShape(json: field.value) else { return nil }
                shapes.append((field.name, shape))
            }
            self = .map(shapes)
        default:
            return nil
        }
    }
}
