import Foundation
import RillLocks

/// The place where models are inserted, deleted, saved and fetched.
///
/// Changes are staged in the context until ``save()``, which writes all of them in one atomic
/// commit of the store's log. Fetches see the context's unsaved inserts and deletes (as in
/// SwiftData), so code can read what it just inserted before saving; other contexts see a change
/// once it is saved.
///
/// ## Thread safety
///
/// A context is `Sendable`: its staged changes are guarded by a lock, so it may be used from any
/// thread or task. Saves of one context run one at a time; every save of every context in the
/// process is written on the store's single writer thread, and `save()` blocks its caller until
/// the commit is durable. Fetches run on the caller's thread, in a read transaction that ends
/// before they return.
///
/// For example:
///
/// ```swift
/// let context = ModelContext(container)
/// context.insert(Book(title: "Dune", author: "Frank Herbert"))
/// try context.save()
/// ```
public final class ModelContext: Sendable {
    /// The container the context belongs to.
    public let container: ModelContainer

    /// The author recorded with each commit this context saves (who or what made the change).
    public var author: String? {
        get { core.state.withLock { $0.author } }
        set { core.state.withLock { $0.author = newValue } }
    }

    /// Whether the context holds changes that are not saved.
    public var hasChanges: Bool { core.state.withLock { !$0.staged.isEmpty } }

    @usableFromInline var store: Store { container.store }
    let core: Core

    /// A context's mutable part. The container keeps its main context's core, so that every
    /// `mainContext` handle shares one set of staged changes without a reference cycle.
    final class Core: Sendable {
        let state = Lock(State())
        let saveLock = Lock(())
        init() {}
    }

    struct State {
        var author: String?
        var staged = StagedChanges()
        /// Whether staged changes are saved without a call to `save()` (see `autosaveEnabled`).
        var autosaves = false
        /// Whether an autosave is scheduled and has not run yet.
        var autosaveScheduled = false
        /// How many `transaction(block:)` blocks are running: an autosave waits for their save.
        var transactions = 0

        /// After a change is staged: whether an autosave is to be scheduled now.
        mutating func schedulesAutosave() -> Bool {
            guard autosaves, !autosaveScheduled, !staged.isEmpty else { return false }
            autosaveScheduled = true
            return true
        }
    }

    /// A new context of `container`, with no staged changes.
    public convenience init(_ container: ModelContainer) {
        self.init(container: container, core: Core())
    }

    init(container: ModelContainer, core: Core) {
        self.container = container
        self.core = core
    }

    // MARK: - Staging changes

    /// Stages `model` for insertion; when a model with the same `id` is stored, the save replaces it.
    ///
    /// When a unique index of `T` finds another stored model with `model`'s values, the save updates
    /// that model instead (or fails, as the index says): see ``ModelIndex/unique(_:onConflict:)`` and
    /// ``upsertAndFetch(_:)``.
    public func insert<T: PersistentModel>(_ model: T) {
        let key = StagedChanges.Key(entity: T.entityName, id: model.id.storageKey)
        staging { $0.staged.stage(.upsert(model), for: key) }
    }

    /// Stages the deletion of the stored model with `model`'s `id`.
    public func delete<T: PersistentModel>(_ model: T) {
        let key = StagedChanges.Key(entity: T.entityName, id: model.id.storageKey)
        staging { $0.staged.stage(.delete, for: key) }
    }

    /// Stages the deletion of every model of type `model` that matches `predicate` (all of them
    /// when nil), as seen by this context now. The deletions take effect at the next save.
    ///
    /// `includeSubclasses` is accepted for SwiftData's callers: a model is a value type, which
    /// has no subclasses, so it changes nothing (a family's other kinds are never included).
    public func delete<T: PersistentModel>(
        model: T.Type, where predicate: Predicate<T>? = nil, includeSubclasses: Bool = true
    ) throws {
        let ids = try fetchIdentifiers(FetchDescriptor<T>(predicate: predicate))
        staging { state in
            for id in ids {
                state.staged.stage(.delete, for: StagedChanges.Key(entity: T.entityName, id: id.storageKey))
            }
        }
    }

    /// Changes the context's state with `body` (its staged changes), then schedules an autosave
    /// when one is due.
    func staging(_ body: (inout State) -> Void) {
        let schedules = core.state.withLock { state in
            body(&state)
            return state.schedulesAutosave()
        }
        if schedules { scheduleAutosave() }
    }

    /// Discards every staged change.
    public func rollback() {
        core.state.withLock { $0.staged.removeAll() }
    }

    /// The staged changes as they are now.
    func stagedSnapshot() -> StagedChanges { core.state.withLock { $0.staged } }

    // MARK: - Saving

    /// Writes every staged change in one atomic commit of the log.
    ///
    /// Either all staged changes are saved or none is: when a model fails to encode, an
    /// identifier cannot be stored or the disk is full, the store is left as it was, the changes
    /// stay staged, and the error is thrown. When the map is full it is grown and the save
    /// replayed, invisibly. With the default durability the commit is on disk when `save()`
    /// returns.
    ///
    /// Changes that leave a record as it is (inserting a model identical to the stored one,
    /// deleting a model that is not stored) are not recorded; a save with nothing left writes no
    /// commit.
    ///
    /// - Returns: the sequence number of the commit, or nil when nothing was written.
    /// - Throws: ``RillError``; with `.uniqueConflict` when a unique index refuses a change (see
    ///   ``ModelIndex/unique(_:onConflict:)``).
    @discardableResult
    public func save() throws -> UInt64? {
        try save(autosaving: false)
    }

    /// `save()`. `autosaving`: only while autosave is on and no transaction block runs, checked
    /// as the staged changes are taken, so that a block's changes are never saved in part.
    /// `endingTransaction`: the save of a `transaction(block:)`, which ends it as it takes the
    /// staged changes.
    func save(autosaving: Bool = false, endingTransaction: Bool = false) throws -> UInt64? {
        try core.saveLock.withLock { _ -> UInt64? in
            let (staged, author) = core.state.withLock { state -> (StagedChanges, String?) in
                if endingTransaction { state.transactions -= 1 }
                if autosaving, !state.autosaves || state.transactions > 0 { return (StagedChanges(), nil) }
                state.staged.index()
                return (state.staged, state.author)
            }
            guard !staged.isEmpty else { return nil }
            guard container.allowsSave else {
                throw RillError(.readOnly, "the container's configuration does not allow saving")
            }
            let (entry, batch) = try commit(staged, author: author)
            core.state.withLock { $0.staged.removeSaved(staged) }
            let sequence = entry?.sequence
            // A large save leaves hundreds of thousands of objects to free (the staged models,
            // their encodings, the log entry): free them off the caller's path.
            if staged.entries.count >= Self.overlapThreshold {
                let leftovers = UncheckedSendable((staged, entry, batch))
                Self.releaseQueue.async { withExtendedLifetime(leftovers) {} }
            }
            return sequence
        }
    }

    /// Where large saves' leftovers are freed.
    private static let releaseQueue = DispatchQueue(label: "rill.context.release", qos: .utility)

    /// Saves of more changes than this are encoded while the writer stores them.
    private static let overlapThreshold = 8_192
    private static let chunkSize = 2_048

    /// Checks entities and identifiers, encodes the models and writes them in one commit.
    ///
    /// Identifiers and entities are checked before the store is touched. A small save is encoded
    /// first and then written; a large one is encoded chunk by chunk on this thread while the
    /// writer thread stores the chunks already encoded, inside the one write transaction.
    private func commit(_ staged: StagedChanges, author: String?) throws -> (LogEntry?, PreparedBatch?) {
        let entities = try targets(of: staged)
        let entries = staged.entries
        func prepare(_ range: Range<Int>) throws -> [PreparedChange] {
            try range.map { index in
                let entry = entries[index]
                switch entry.change {
                case .upsert(let model):
                    return PreparedChange(
                        entity: entities[index], key: entry.key.id, operation: .upsert(try Self.encode(model)))
                case .delete:
                    return PreparedChange(entity: entities[index], key: entry.key.id, operation: .delete)
                }
            }
        }
        guard entries.count >= Self.overlapThreshold else {
            return (try store.commit(try prepare(0..<entries.count), author: author), nil)
        }
        let chunkCount = (entries.count + Self.chunkSize - 1) / Self.chunkSize
        let batch = PreparedBatch(chunkCount: chunkCount)
        let entry = try store.commit(batch, author: author) {
            do {
                for chunk in 0..<chunkCount {
                    let start = chunk * Self.chunkSize
                    batch.publish(chunk, try prepare(start..<min(start + Self.chunkSize, entries.count)))
                }
            } catch {
                batch.fail(error)
            }
        }
        return (entry, batch)
    }

    /// The storage of each staged change's entity, after checking that the entity belongs to the
    /// container and the identifier fits in a key.
    private func targets(of staged: StagedChanges) throws -> [EntityStorage] {
        let maxKeySize = store.maxKeySize
        var entities: [EntityStorage] = []
        entities.reserveCapacity(staged.entries.count)
        var previous: EntityStorage?
        for entry in staged.entries {
            let key = entry.key
            // Consecutive changes are usually of one entity: skip the table then.
            if let previous, previous.name == key.entity, key.id.count <= maxKeySize {
                entities.append(previous)
                continue
            }
            guard let entity = container.entitiesByName[key.entity] else {
                throw ModelContainer.unregisteredModelError(key.entity)
            }
            guard key.id.count <= maxKeySize else {
                throw RillError(
                    .invalidIdentifier,
                    "an identifier of \(key.entity) takes \(key.id.count - 1) bytes; identifiers are limited to "
                        + "\(maxKeySize - 1) bytes")
            }
            entities.append(entity)
            previous = entity
        }
        return entities
    }

    static func encode<M: PersistentModel>(_ model: M) throws -> [UInt8] {
        do {
            return try M.encodeStored(model)
        } catch {
            throw RillError(
                .encodingFailed,
                "cannot save \(M.entityName) \(model.id): \(describe(error))",
                underlyingError: error)
        }
    }

    // MARK: - Internal

    /// The storage of `T`; nil when the container cannot write and the store has no such entity yet.
    func entity<T: PersistentModel>(for type: T.Type) throws -> EntityStorage? {
        try entity(for: T.self, named: T.entityName)
    }

    /// `entity(for:)` with `T.entityName` read already (a call through the model's conformance,
    /// which looks its name up under a lock).
    @usableFromInline
    func entity<T: PersistentModel>(for type: T.Type, named name: String) throws -> EntityStorage? {
        // Every entity the container opened is of one of its model types: one lookup for a fetch.
        if let entity = container.entitiesByName[name] { return entity }
        guard container.modelTypeNames.contains(name) else {
            throw ModelContainer.unregisteredModelError("\(T.self)")
        }
        return nil
    }

    /// The context's unsaved changes to models of type `T`: identifier key → model, or nil for a deletion.
    func stagedChanges<T: PersistentModel>(of type: T.Type) -> [[UInt8]: T?] {
        stagedChanges(ofEntity: T.entityName, as: T.self)
    }

    /// The context's unsaved changes to records of `entity`: identifier key → the model as an
    /// `Element`, or nil for a deletion (and for a model that is not an `Element`: another kind
    /// of a family, which takes the place of the stored record).
    @usableFromInline
    func stagedChanges<Element>(ofEntity entity: String, as type: Element.Type) -> [[UInt8]: Element?] {
        // The common case, a context with nothing unsaved, kept clear of the generic dictionary
        // (whose literal, or initializer, looks up the metadata of `Element?`).
        if core.state.withLock({ $0.staged.isEmpty }) { return StorageHeader.emptyDictionary() }
        return core.state.withLock { state in
            var changes: [[UInt8]: Element?] = [:]
            for entry in state.staged.entries where entry.key.entity == entity {
                switch entry.change {
                case .upsert(let model): changes[entry.key.id] = .some(model as? Element)
                case .delete: changes[entry.key.id] = .some(nil)
                }
            }
            return changes
        }
    }

    /// The context's unsaved change to the `T` with identifier key `key`: `.some(nil)` for a deletion, nil for none.
    func stagedChange<T: PersistentModel>(of type: T.Type, key: [UInt8]) -> T?? {
        let change = core.state.withLock { $0.staged.change(for: StagedChanges.Key(entity: T.entityName, id: key)) }
        switch change {
        case .upsert(let model): return .some(model as? T)
        case .delete: return .some(nil)
        case nil: return nil
        }
    }

    /// A one-line description of a coding error, naming the field path.
    static func describe(_ error: any Error) -> String {
        func path(_ codingPath: [any CodingKey]) -> String {
            codingPath.isEmpty ? "the record" : "`" + codingPath.map(\.stringValue).joined(separator: ".") + "`"
        }
        switch error {
        case EncodingError.invalidValue(_, let context):
            return "\(path(context.codingPath)): \(context.debugDescription)"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
            DecodingError.keyNotFound(_, let context), DecodingError.dataCorrupted(let context):
            var text = "\(path(context.codingPath)): \(context.debugDescription)"
            if case DecodingError.keyNotFound(let key, _) = error {
                text +=
                    " (missing `\(key.stringValue)`: a field the model gained? make it optional, or declare its "
                    + "default with .added in the model's `static let evolution`)"
            }
            return text
        default:
            return String(describing: error)
        }
    }
}

/// A value handed to another thread that no longer shares it: only its release happens there.
private struct UncheckedSendable<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
