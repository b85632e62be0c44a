import Foundation
import RillLocks

/// The results of ``ModelContext/fetch(_:batchSize:)``: the models of a fetch, in its order,
/// decoded a batch at a time as they are read.
///
/// The fetch reads every matching record in one snapshot of the store, so the collection is
/// what a ``ModelContext/fetch(_:)->[T]`` made at that moment returns, whatever is saved later. It
/// holds the stored records' bytes, not their models: a model is decoded when its batch is
/// reached, and only the last batch read stays decoded. Every record was decoded once by the
/// fetch, which throws as ``ModelContext/fetch(_:)->[T]`` does when one does not decode; reading the
/// collection never fails.
///
/// ```swift
/// for book in try context.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]), batchSize: 500) {
///     index(book)
/// }
/// ```
public struct FetchResultsCollection<Element: PersistentModel>: RandomAccessCollection, Sendable {
    public typealias Index = Int

    private let storage: Storage

    init(storage: Storage) { self.storage = storage }

    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.rows.count }

    public subscript(position: Int) -> Element {
        precondition(position >= 0 && position < storage.rows.count, "index \(position) out of range")
        return storage.model(at: position)
    }

    /// The rows of a fetch, and the batch decoded last.
    final class Storage: @unchecked Sendable {
        // Sendable: immutable but for `decoded`, behind its lock; the staged models and the
        // stored bytes are values.
        enum Row {
            /// A stored record: its identifier key and bytes, in `bytes`.
            case stored(key: Range<Int>, record: Range<Int>)
            /// A model at hand: an unsaved one of the context, or one read with its relationships.
            case model(Element)
        }

        let rows: [Row]
        let bytes: [UInt8]
        let batchSize: Int
        private let decoded = Lock<(batch: Int, models: [Element])?>(nil)

        init(rows: [Row], bytes: [UInt8], batchSize: Int) {
            self.rows = rows
            self.bytes = bytes
            self.batchSize = batchSize
        }

        func model(at position: Int) -> Element {
            let batch = position / batchSize
            return decoded.withLock { decoded in
                if let decoded, decoded.batch == batch { return decoded.models[position - batch * batchSize] }
                let start = batch * batchSize
                var spare: RecordDecoder?
                let models = (start..<Swift.min(start + batchSize, rows.count)).map { decode($0, reusing: &spare) }
                decoded = (batch, models)
                return models[position - start]
            }
        }

        private func decode(_ index: Int, reusing spare: inout RecordDecoder?) -> Element {
            switch rows[index] {
            case .model(let model):
                return model
            case .stored(let key, let record):
                do {
                    return try bytes.withUnsafeBytes { bytes in
                        try Element.decodeStored(
                            from: UnsafeRawBufferPointer(rebasing: bytes[record]),
                            key: UnsafeRawBufferPointer(rebasing: bytes[key]), reusing: &spare)
                    }
                } catch {
                    // The fetch decoded these bytes already: only an `init(from:)` that decides
                    // otherwise the second time gets here.
                    preconditionFailure(
                        "a \(Element.entityName) record that decoded when fetched no longer decodes: \(error)")
                }
            }
        }
    }
}

extension ModelContext {
    /// The models `fetch(descriptor)` would return, decoded `batchSize` at a time as the
    /// collection is read (see ``FetchResultsCollection``): a pass over many models holds their
    /// stored bytes and one batch of models, not every model at once. (A descriptor that
    /// prefetches relationships reads every model at once, with them.)
    ///
    /// - Parameters:
    ///   - descriptor: the models to fetch, as for ``fetch(_:)->[T]``.
    ///   - batchSize: how many models are decoded at a time; a value below one decodes one at a
    ///     time.
    /// - Throws: what ``fetch(_:)->[T]`` throws.
    public func fetch<T: PersistentModel>(
        _ descriptor: FetchDescriptor<T>, batchSize: Int
    ) throws -> FetchResultsCollection<T> {
        let size = max(batchSize, 1)
        let staged = descriptor.includePendingChanges ? stagedChanges(of: T.self) : [:]
        // Nothing stored yet, or relationships to read with each model: the models themselves.
        guard descriptor.relationshipKeyPathsForPrefetching.isEmpty, let entity = try entity(for: T.self) else {
            return FetchResultsCollection(
                storage: .init(rows: try fetch(descriptor).map { .model($0) }, bytes: [], batchSize: size))
        }
        let store = self.store
        return try store.read { snapshot in
            var executor = QueryExecutor(store: store, entity: entity, descriptor: descriptor, staged: staged)
            executor.transaction = snapshot
            var rows: [FetchResultsCollection<T>.Storage.Row] = []
            var bytes: [UInt8] = []
            var spare: RecordDecoder?
            for key in try executor.identifierKeys() {
                if let model = staged[key], let model {
                    rows.append(.model(model))
                    continue
                }
                guard let record = try snapshot.record(of: entity, key: key) else { continue }
                // Decoded once here, so that a record that does not decode fails the fetch.
                _ = try key.withUnsafeBytes { try T.decodeStored(from: record, key: $0, reusing: &spare) }
                let keyStart = bytes.count
                bytes += key
                let recordStart = bytes.count
                bytes += record
                rows.append(.stored(key: keyStart..<recordStart, record: recordStart..<bytes.count))
            }
            return FetchResultsCollection(storage: .init(rows: rows, bytes: bytes, batchSize: size))
        }
    }
}
