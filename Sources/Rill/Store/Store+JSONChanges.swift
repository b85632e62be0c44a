import Foundation
import RillLocks
import RillStorage

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
                    operation = .upsert(try conformed(dropNulls: !change.keepsNulls).recordBytes())
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
        if !fresh, let known = recordShapes.withLock({ $0.byEntity[entity.name] }) { return known }
        let shape = try recordShape(of: entity, declared: declared[entity.name])
        if case .any = shape { return shape }
        if declared[entity.name] == nil { recordShapes.withLock { $0.byEntity[entity.name] = shape } }
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
        return try withReadTransaction { txn in try Self.declaredShape(of: entity, in: txn, meta: meta) }
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
    /// any record shows it. A field declared before keeps its place; the new description's kind wins (a kind the
    /// records or the model's schema contradict was refused before: `checkDeclaredKinds`).
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
            case .string(let text) = fields[index].value, let uuid = UUIDText.uuid(text)
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
            guard let uuid = UUIDText.uuid(text) else {
                throw RillError(.invalidRecord, "the \(entity) id \"\(text)\" is not a UUID")
            }
            return uuid.storageKey
        default:
            throw RillError(
                .invalidRecord,
                "an id of \(entity) must be \(kind == .integer ? "an integer" : "a string"); got \(id.jsonString())"
            )
        }
    }
}
