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
    /// Where the change came from, for errors (`line 7 of books.ndjson`); nil to name it by its place among the
    /// changes of its save.
    package var source: String?

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
    /// Turns JSON changes into changes ready to save: the entity must exist (or be declared), identifiers must
    /// be of the entity's kind, and record fields must be ones its records have, with values of their kinds
    /// (JSON numbers, strings and so on are converted to the stored kinds: a number to a floating-point field,
    /// an ISO-8601 string to a date, a string to a UUID, base64 to data).
    ///
    /// What records have is learned from up to 64 stored records of the entity, with the field kinds a
    /// declaration gives it over them. An entity the store lacks may be one of `declarations` (an import's
    /// descriptions, applied by the same save: `commit(_:author:declaring:)`); its records then take the
    /// declared identifier kind and fields (any fields when it declares none).
    ///
    /// - Throws: `RillError(.unknownEntity)`, `RillError(.invalidConfiguration)` (a declaration whose
    ///   identifier kind is not the stored one) or `RillError(.invalidRecord)`, naming the change (its source, or
    ///   its 1-based position) and the problem.
    package func prepare(
        _ changes: [JSONChange], declaring declarations: [EntityDeclaration] = []
    ) throws -> [PreparedChange] {
        var declared: [String: EntityDeclaration] = [:]
        for declaration in declarations {
            declared[declaration.name] = declared[declaration.name].map { $0.followed(by: declaration) } ?? declaration
        }
        let declaredShapes = declared.compactMapValues(\.fields)
        for declaration in declarations {
            if let stored = try entity(named: declaration.name), stored.identifierKind != declaration.identifierKind {
                throw RillError(
                    .invalidConfiguration,
                    (declaration.source.map { "\($0): " } ?? "") + "entity \(declaration.name) is stored with "
                        + "\(stored.identifierKind.name) identifiers, but it is declared with "
                        + "\(declaration.identifierKind.name) identifiers")
            }
        }
        // The entity's storage (nil for one the save declares), its kind of identifier, its shape, and whether
        // the shape was just worked out.
        var targets: [String: (EntityStorage?, IdentifierKind, RecordShape, fresh: Bool)] = [:]
        var prepared: [PreparedChange] = []
        prepared.reserveCapacity(changes.count)
        for (index, change) in changes.enumerated() {
            let source = change.source ?? (changes.count > 1 ? "change \(index + 1)" : nil)
            do {
                var (entity, kind, shape, fresh): (EntityStorage?, IdentifierKind, RecordShape, Bool)
                if let known = targets[change.entity] {
                    (entity, kind, shape, fresh) = known
                } else if let found = try self.entity(named: change.entity) {
                    (entity, kind, shape, fresh) = (
                        found, found.identifierKind, try recordShape(of: found, declared: declaredShapes, fresh: false),
                        false
                    )
                    targets[change.entity] = (entity, kind, shape, fresh)
                } else if let declaration = declared[change.entity] {
                    (entity, kind, shape, fresh) = (nil, declaration.identifierKind, declaration.fields ?? .any, true)
                    targets[change.entity] = (entity, kind, shape, fresh)
                } else {
                    throw try unknownEntityError(change.entity)
                }
                let key = try Self.identifierKey(change.id, kind: kind, entity: change.entity)
                func conformed(dropNulls: Bool) throws -> RecordValue {
                    do {
                        return Self.identified(
                            try shape.conform(change.record!, entity: change.entity, dropNulls: dropNulls), kind: kind)
                    } catch let error as RillError where error.code == .invalidRecord && !fresh {
                        // Records may have gained fields since the shape was learned: learn it again.
                        (shape, fresh) = (try recordShape(of: entity!, declared: declaredShapes, fresh: true), true)
                        targets[change.entity] = (entity, kind, shape, fresh)
                        return Self.identified(
                            try shape.conform(change.record!, entity: change.entity, dropNulls: dropNulls), kind: kind)
                    }
                }
                let operation: PreparedChange.Operation
                switch change.operation {
                case .delete:
                    operation = .delete
                case .insert:
                    operation = .upsert(try conformed(dropNulls: true).recordBytes())
                case .update:
                    guard case .map(let fields) = try conformed(dropNulls: false) else {
                        throw RillError(.invalidRecord, "not an object")
                    }
                    operation = .update(fields)
                }
                if let entity {
                    prepared.append(PreparedChange(entity: entity, key: key, operation: operation, source: source))
                } else {
                    prepared.append(
                        PreparedChange(entityNamed: change.entity, key: key, operation: operation, source: source))
                }
            } catch let error as RillError {
                guard let source else { throw error }
                throw RillError(error.code, "\(source): \(error.message)", underlyingError: error.underlyingError)
            }
        }
        return prepared
    }

    /// The shape of `entity`'s records: remembered from an earlier save unless `fresh`, else worked out
    /// (`recordShape(of:declared:)`) and remembered once something is known, unless `declared` names the entity
    /// (a description the store may not hold yet). What writes given as JSON and text queries (`check(_:)`) both
    /// take an entity to have.
    package func recordShape(
        of entity: EntityStorage, declared: [String: RecordShape], fresh: Bool
    ) throws -> RecordShape {
        if !fresh, let known = recordShapes.withLock({ $0[entity.name] }) { return known }
        let shape = try recordShape(of: entity, declared: declared[entity.name])
        if case .any = shape { return shape }
        if declared[entity.name] == nil { recordShapes.withLock { $0[entity.name] = shape } }
        return shape
    }

    /// What JSON writes to `entity` must look like: the kinds its description declared (`declared`, else the
    /// one the store keeps, see `EntityDeclaration`), then what its stored records show for fields the description
    /// does not name. Where the two disagree, the description wins: it says what the model types expect.
    ///
    /// - Parameter learned: what the stored records show, when the caller learned it (from all of them, in its
    ///   own snapshot); by default, learned from up to 64 of them.
    package func recordShape(
        of entity: EntityStorage, declared: RecordShape? = nil, learned: RecordShape? = nil
    ) throws -> RecordShape {
        let learned = try learned ?? RecordShape.learn(from: entity, in: self)
        guard let declared = try declared ?? declaredShape(of: entity.name) else { return learned }
        return declared.withIdentifier(entity.identifierKind).merged(with: learned)
    }

    /// The field kinds a description declared for `entity` (see `EntityDeclaration.fields`), or nil.
    package func declaredShape(of entity: String) throws -> RecordShape? {
        let meta = self.meta
        return try read { txn in try Self.declaredShape(of: entity, in: txn, meta: meta) }
    }

    static func declaredShape(of entity: String, in txn: some Transaction, meta: Database) throws -> RecordShape? {
        guard let raw = try txn.get(shapeCatalogKey(for: entity), in: meta) else { return nil }
        guard raw.count > 1, raw[0] == shapeCatalogVersion else {
            throw RillError(.corruptStore, "the declared fields of entity \(entity) are unreadable")
        }
        let value: RecordValue
        do {
            value = try RecordValue(record: UnsafeRawBufferPointer(rebasing: raw[1...]))
        } catch {
            throw RillError(
                .corruptStore, "the declared fields of entity \(entity) are unreadable", underlyingError: error)
        }
        guard let shape = RecordShape(json: value) else {
            throw RillError(.corruptStore, "the declared fields of entity \(entity) are not field kinds")
        }
        return shape
    }

    /// Keeps, inside `txn`, the field kinds a description (an import's) gives `entity`, so that every later write
    /// given as JSON (the CLI's, the daemon's) stores each field as the kind the model types read, even before
    /// any record shows it. A field declared before keeps its place; the new description's kind wins.
    static func keepDeclaredShape(
        _ shape: RecordShape, of entity: String, in txn: WriteTransaction, meta: Database
    )
        throws
    {
        let combined =
            try declaredShape(of: entity, in: txn, meta: meta).map { shape.merged(with: $0).ordered(like: $0) } ?? shape
        let value = [shapeCatalogVersion] + combined.jsonValue.recordBytes()
        try txn.put(value, for: shapeCatalogKey(for: entity), in: meta)
    }

    private static let shapeCatalogVersion: UInt8 = 1

    private static func shapeCatalogKey(for entity: String) -> [UInt8] { Array("fields:\(entity)".utf8) }

    /// `record` with its `id` field of the entity's identifier kind (a UUID given as a string becomes a UUID), as
    /// the model types store it, whatever the shape knew of it.
    private static func identified(_ record: RecordValue, kind: IdentifierKind) -> RecordValue {
        guard kind == .uuid, case .map(var fields) = record,
            let index = fields.firstIndex(where: { $0.name == "id" }),
            case .string(let text) = fields[index].value, let uuid = UUID(uuidString: text)
        else { return record }
        fields[index].value = .uuid(uuid)
        return .map(fields)
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

    /// The shape of up to 64 of `entity`'s stored records, merged: what a write checks against.
    package static func learn(from entity: EntityStorage, in store: Store) throws -> RecordShape {
        try store.read { txn in try learn(from: entity, in: txn, limit: 64) }
    }

    /// The shape of `entity`'s stored records in `txn`, merged: of the first `limit` of them, or of all of them
    /// (what an export describes, so that a field only later records have is described too).
    package static func learn(from entity: EntityStorage, in txn: some Transaction, limit: Int?) throws -> RecordShape {
        var shape: RecordShape?
        try txn.withCursor(entity.database) { cursor in
            var current = try cursor.first()
            var count = 0
            while let entry = current, count < limit ?? Int.max {
                let value = try Store.recordValue(entry.value, key: entry.key, entity: entity.name)
                shape = shape.map { $0.merged(with: RecordShape(value)) } ?? RecordShape(value)
                count += 1
                current = try cursor.next()
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

    /// The shape with an `id` field of the identifier's kind when it names no `id` (a description
    /// need not list the identifier: every record has one).
    func withIdentifier(_ kind: IdentifierKind) -> RecordShape {
        guard case .map(let fields) = self, !fields.contains(where: { $0.name == "id" }) else { return self }
        let example: RecordValue =
            switch kind {
            case .integer: .int(0)
            case .string: .string("")
            case .uuid: .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
            }
        return .map([(name: "id", shape: .scalar(example))] + fields)
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

    /// This shape with its top-level fields in the order of `other`'s, then its own others.
    func ordered(like other: RecordShape) -> RecordShape {
        guard case .map(let fields) = self, case .map(let order) = other else { return self }
        var sorted = order.compactMap { field in fields.first { $0.name == field.name } }
        sorted += fields.filter { field in !order.contains { $0.name == field.name } }
        return .map(sorted)
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
            return try Self.plain(value, fail: fail)
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
                out.append(
                    RecordField(
                        name: field.name,
                        value: try RecordShape.any.conform(
                            field.value, path: path + [field.name], entity: entity, dropNulls: dropNulls)))
            }
            return .map(out)
        case .scalar(let example):
            return try Self.scalar(value, like: example, fail: fail)
        }
    }

    /// `value`, a scalar from JSON, as the stored kind of `example`. Conversions never lose a digit the stored kind
    /// could keep: a number's text goes straight to a Double or a Float (rounded once), to a Decimal only when the
    /// Decimal holds it exactly, and to a Date through exact arithmetic.
    private static func scalar(
        _ value: RecordValue, like example: RecordValue, fail: (String) -> RillError
    ) throws -> RecordValue {
        switch (example, value) {
        case (.bool, .bool), (.int, .int), (.string, .string): return value
        case (.int, _): throw fail("an integer")
        case (.uint, .int(let v)) where v >= 0: return .uint(UInt64(v))
        case (.uint, .uint): return value
        case (.uint, _): throw fail("a non-negative integer")
        case (.double, _):
            guard let double = Self.floatingPoint(Double.self, value) else { throw fail("a number") }
            return .double(double)
        case (.float, _):
            guard let float = Self.floatingPoint(Float.self, value) else { throw fail("a number") }
            return .float(float)
        case (.date, _):
            guard let date = Self.date(value) else {
                throw fail("an ISO-8601 date (or a number of seconds since 1970)")
            }
            return .date(date)
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
        case (.decimal, _):
            guard let decimal = Self.decimal(value) else {
                throw fail("a decimal number that a Decimal holds exactly (at most 38 digits)")
            }
            return .decimal(decimal)
        case (.bool, _): throw fail("true or false")
        case (.string, _): throw fail("a string")
        default: return try plain(value, fail: fail)
        }
    }

    /// A value for a field of unknown kind: as JSON gave it, but with numbers that are not integers as Doubles
    /// (the reader keeps them as text until the kind is known).
    private static func plain(_ value: RecordValue, fail: (String) -> RillError) throws -> RecordValue {
        switch value {
        case .decimal:
            guard let double = floatingPoint(Double.self, value) else { throw fail("a number within a Double's range") }
            return .double(double)
        case .array(let elements):
            return .array(try elements.map { try plain($0, fail: fail) })
        case .map(let fields):
            return .map(try fields.map { RecordField(name: $0.name, value: try plain($0.value, fail: fail)) })
        default:
            return value
        }
    }

    /// A JSON number (or "NaN", "Infinity", "-Infinity", as the JSON writer gives non-finite values) as the
    /// nearest `F`, read from its text; nil for anything else, or a finite number beyond `F`'s range.
    private static func floatingPoint<F: BinaryFloatingPoint & LosslessStringConvertible>(
        _ type: F.Type, _ value: RecordValue
    ) -> F? {
        let text: String
        switch value {
        case .int(let v): text = String(v)
        case .uint(let v): text = String(v)
        case .decimal(let v): text = v
        case .string("NaN"): return F.nan
        case .string("Infinity"): return F.infinity
        case .string("-Infinity"): return -F.infinity
        default: return nil
        }
        guard let result = F(text), result.isFinite else { return nil }
        return result
    }

    /// A JSON number (or a string holding one, or "NaN") as the text of the Decimal that is exactly that number, as
    /// the record encoder writes it (its description); nil when a Decimal cannot hold it exactly.
    private static func decimal(_ value: RecordValue) -> String? {
        let text: String
        switch value {
        case .int(let v): text = String(v)
        case .uint(let v): text = String(v)
        case .decimal(let v), .string(let v): text = v
        default: return nil
        }
        if text == "NaN" { return text }
        guard let digits = DecimalDigits(text), let decimal = Decimal(string: text, locale: nil),
            DecimalDigits(decimal.description) == digits
        else { return nil }
        return decimal.description
    }

    /// An ISO-8601 string, a number of seconds since 1970, or a non-finite value as the JSON writer gives it.
    private static func date(_ value: RecordValue) -> Date? {
        let seconds: Double?
        switch value {
        case .string("NaN"): seconds = .nan
        case .string("Infinity"): seconds = .infinity
        case .string("-Infinity"): seconds = -.infinity
        case .string(let text): seconds = ISO8601Time.secondsSinceReferenceDate(parsing: text)
        case .int(let v):
            seconds = DecimalDigits(String(v)).flatMap(ISO8601Time.secondsSinceReferenceDate(secondsSince1970:))
        case .uint(let v):
            seconds = DecimalDigits(String(v)).flatMap(ISO8601Time.secondsSinceReferenceDate(secondsSince1970:))
        case .decimal(let v):
            seconds = DecimalDigits(v).flatMap(ISO8601Time.secondsSinceReferenceDate(secondsSince1970:))
        default: seconds = nil
        }
        return seconds.map { Date(timeIntervalSinceReferenceDate: $0) }
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
