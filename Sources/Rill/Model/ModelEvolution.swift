import Foundation
import Synchronization

/// How records written by earlier versions of a model read as the current one.
///
/// Synthesized `Codable` ignores a property's default value: a record written before `rank`
/// existed does not decode as a model declaring `var rank: Int = 0`. Say so once, on the
/// model, and every read of such a record — fetches, live queries, history, as-of queries —
/// sees it as the current version would have written it:
///
/// ```swift
/// struct Book: PersistentModel {
///     var id: String
///     var title: String        // was `name` in version 1
///     var rank: Int = 0        // new in version 2
///     var note: String?        // new in version 2: optional, nothing to declare
///
///     static let evolution = ModelEvolution<Book>(
///         .added(\.rank, default: 0),
///         .renamed(\.title, from: "name"))
/// }
/// ```
///
/// A field removed from the model needs nothing: the stored value is left unread. An optional
/// field added needs nothing either: a record without it reads as `nil`. The steps apply to a
/// record only when it lacks the current field, so reading a record the current version wrote
/// costs nothing more. Records are not rewritten: the next save of a model stores it whole, in
/// the current shape.
///
/// A field whose kind changed cannot be read automatically: declare a migration for it with
/// ``Step/migrated(from:_:)``, which rewrites the store's records once, in a commit of its own.
/// Without one, the container refuses the store with a ``RillError/Code/migrationRequired``
/// error whose ``SchemaKindChange`` names the entity, the field, both versions and both kinds.
public struct ModelEvolution<Model: PersistentModel>: Sendable {
    /// One difference between an earlier version of the model and this one.
    public struct Step: Sendable {
        enum Kind: Sendable {
            case added(field: String, value: RecordValue)
            case renamed(field: String, from: String)
            case migrated(ModelMigration<Model>)
            case invalid(String)
        }

        let kind: Kind

        /// A field the model gained, read as `value` from a record that lacks it (also a field of a
        /// nested struct, `\.address.zip`, in a record whose struct lacks it).
        public static func added<Value: Encodable & Sendable>(
            _ keyPath: KeyPath<Model, Value>, default value: Value
        ) -> Step {
            guard let field = Self.field(of: keyPath) else {
                return Step(kind: .invalid("an added field's key path is not a stored property of \(Model.self)"))
            }
            do {
                let bytes = try RecordCoder.encode(value)
                return Step(
                    kind: .added(field: field, value: try bytes.withUnsafeBytes { try RecordValue(record: $0) }))
            } catch {
                return Step(kind: .invalid("the default value of \(Model.self).\(field) does not encode: \(error)"))
            }
        }

        /// A field the model renamed: a record that lacks it reads it from `oldName`. For a field of
        /// a nested struct (`\.address.city`), `oldName` is its earlier name in that struct.
        public static func renamed<Value>(_ keyPath: KeyPath<Model, Value>, from oldName: String) -> Step {
            guard let field = Self.field(of: keyPath) else {
                return Step(kind: .invalid("a renamed field's key path is not a stored property of \(Model.self)"))
            }
            return Step(kind: .renamed(field: field, from: oldName))
        }

        /// A migration from an earlier version of the model, for what no other step reads: a field
        /// whose kind changed. `earlier` is that version's type (a `Decodable` copy of the model as
        /// it was); `migrate` turns each record that does not read as the current version,
        /// decoded as `earlier`, into the current model, keeping its id.
        ///
        /// The container runs it once per store, when it first opens a store whose current
        /// schema is the one `earlier` reads: in one write transaction, as one commit authored
        /// `rill.migration`, together with the registration of the new schema, so history shows
        /// it and no reader sees the new schema before the records. It is recorded in the
        /// catalog, and a second process opening the store at the same time finds it done. For
        /// example, `priority` was a string and is now an integer:
        ///
        /// ```swift
        /// struct TaskV1: Decodable { var id: String; var title: String; var priority: String }
        ///
        /// static let evolution = ModelEvolution<Task>(
        ///     .migrated(from: TaskV1.self) { old in
        ///         Task(id: old.id, title: old.title, priority: old.priority == "high" ? 2 : 1)
        ///     })
        /// ```
        public static func migrated<Earlier: Decodable & SendableMetatype>(
            from earlier: Earlier.Type, _ migrate: @escaping @Sendable (Earlier) throws -> Model
        ) -> Step {
            let migration = ModelMigration(from: earlier, migrate)
            guard migration.earlierSchema != nil else {
                return Step(kind: .invalid("the fields of \(Earlier.self), migrated from, cannot be learned"))
            }
            return Step(kind: .migrated(migration))
        }

        /// The dotted path of the stored field `keyPath` reads (`address.city` for a field of a
        /// nested struct, `FieldPath.text(of:)`); nil for a computed one.
        private static func field(of keyPath: AnyKeyPath) -> String? {
            guard let path = FieldPath.components(of: keyPath, root: Model.self), !path.isEmpty else { return nil }
            return FieldPath.text(of: path)
        }
    }

    let steps: [Step]
    /// The current names of the fields the steps add or rename: a record of an earlier version
    /// may lack them as stored, so predicates and sorts that read them go by the models.
    let fields: Set<String>
    /// The steps as the rule every reader of records applies (nil without added or renamed
    /// fields); the catalog's schema keeps the same, for readers without the model type.
    let records: RecordEvolution?
    /// The migrations from earlier versions, in the order declared.
    let migrations: [ModelMigration<Model>]

    /// The differences from earlier versions, in any order.
    public init(_ steps: Step...) {
        self.steps = steps
        var defaults: [RecordField] = []
        var renames: [(field: String, from: String)] = []
        var migrations: [ModelMigration<Model>] = []
        for step in steps {
            switch step.kind {
            case .added(let field, let value): defaults.append(RecordField(name: field, value: value))
            case .renamed(let field, let old): renames.append((field, old))
            case .migrated(let migration): migrations.append(migration)
            case .invalid: continue
            }
        }
        self.migrations = migrations
        records = RecordEvolution(defaults: defaults, renames: renames)
        var fields = records?.fields ?? []
        // A field whose kind a migration changes holds the earlier kind in records of the log
        // and of older writers: predicates and sorts on it go by the models too.
        if !migrations.isEmpty, let probed = ModelSchemaProbe.schema(of: Model.self) {
            var current = EntitySchema(kinds: probed.kinds, optional: probed.optional, indexes: [])
            for rename in renames { current.renamed[rename.field] = rename.from }
            for earlier in migrations.compactMap(\.earlierSchema) {
                for change in current.kindChanges(from: earlier) {
                    let field = change.field.prefix { $0 != "." && $0 != "[" }
                    fields.insert(String(field))
                }
            }
        }
        self.fields = fields
    }

    /// The fields given a default with their defaults, and the renamed ones (current name →
    /// earlier name), as the catalog's schema records them.
    var schemaFields: (defaulted: [String], defaults: [String: RecordValue], renamed: [String: String]) {
        guard let records else { return ([], [:], [:]) }
        var defaults: [String: RecordValue] = [:]
        for field in records.defaults { defaults[field.name] = field.value }
        var renamed: [String: String] = [:]
        for rename in records.renames { renamed[rename.field] = rename.from }
        return (records.defaults.map(\.name), defaults, renamed)
    }

    /// The problems of the steps (a key path that is not a stored property, a default that
    /// does not encode), for the container to refuse the model with.
    var problems: [String] {
        steps.compactMap { step in
            if case .invalid(let problem) = step.kind { return problem }
            return nil
        }
    }

    /// `record` as the current version reads it: each added field it lacks set to its default,
    /// each renamed field it lacks read from its old name; nil when no step changes it.
    func evolve(_ record: UnsafeRawBufferPointer) -> [UInt8]? {
        records?.evolve(record)
    }
}

extension PersistentModel {
    /// Decodes a stored record of this model, reading a record of an earlier version through
    /// ``evolution`` when it lacks a field the model reads, and through its migrations when it
    /// still does not decode (a record of the version before a kind change: in the log, or
    /// written by an older writer running beside), the only cases that pay for it.
    static func decodeStored(from bytes: UnsafeRawBufferPointer) throws -> Self {
        var spare: RecordDecoder?
        return try decodeStored(from: bytes, reusing: &spare)
    }

    /// `decodeStored(from:)` with the decoder `spare` kept from the previous record, for code that
    /// decodes many (see `RecordCoder.decode(_:from:reusing:)`).
    static func decodeStored(from bytes: UnsafeRawBufferPointer, reusing spare: inout RecordDecoder?) throws -> Self {
        do {
            return try RecordCoder.decodeModel(Self.self, from: bytes, reusing: &spare)
        } catch let error as DecodingError {
            return try decodeEvolved(from: bytes, failure: error)
        }
    }

    /// The record that did not decode as it is, through the evolution and the migrations. Apart:
    /// a generic function finds the metadata of every generic type its body names when it is
    /// called (`Self?` here), and decoding calls `decodeStored` for every record it reads.
    @inline(never)
    private static func decodeEvolved(from bytes: UnsafeRawBufferPointer, failure error: DecodingError) throws -> Self {
        let evolution = self.evolution
        var failure = error
        if case .keyNotFound = error, let evolved = evolution.evolve(bytes) {
            do {
                return try RecordCoder.decodeModel(Self.self, from: evolved)
            } catch let again as DecodingError {
                failure = again
            }
        }
        for migration in evolution.migrations {
            if let model = try? migration.migrate(bytes) { return model }
        }
        throw failure
    }

    static func decodeStored(from bytes: [UInt8]) throws -> Self {
        try bytes.withUnsafeBytes { try decodeStored(from: $0) }
    }

    /// The stored record of the identifier key `key` as a model: `decodeStored(from:)`, its
    /// failure naming the record. A static method of the model type, so that a fetch's row calls
    /// no method of a generic executor (whose metadata each call looked up).
    ///
    /// - Throws: `RillError(.decodingFailed)` naming the entity, the identifier and the model type.
    static func decodeStored(from bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer) throws -> Self {
        var spare: RecordDecoder?
        return try decodeStored(from: bytes, key: key, reusing: &spare)
    }

    /// `decodeStored(from:key:)` with the decoder `spare` kept from the previous record.
    static func decodeStored(
        from bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, reusing spare: inout RecordDecoder?
    ) throws -> Self {
        do {
            return try decodeStored(from: bytes, reusing: &spare)
        } catch {
            let id = AnyIdentifier(storageKey: key).map { "\($0)" } ?? "?"
            throw RillError(
                .decodingFailed,
                "the stored \(entityName) \(id) does not decode as \(Self.self): \(ModelContext.describe(error))",
                underlyingError: error)
        }
    }
}
