import Foundation

extension ModelContext {
    /// The models `descriptor` describes, exactly as they were after the commit of `token`:
    /// time travel, with the descriptor's predicate, sort, offset and limit.
    ///
    /// ```swift
    /// let yesterday = try context.fetch(FetchDescriptor<Book>(sortBy: [SortDescriptor(\.title)]), asOf: token)
    /// ```
    ///
    /// The store's history is what was saved: changes staged in this context are not seen.
    /// The cost follows how far back the token is (the commits since it are read, each record
    /// they changed put back as it was) and the results asked for, not the size of the store.
    ///
    /// - Throws: ``RillError`` with `.misuse` when the token is past the store's last commit,
    ///   and the errors of ``fetch(_:)->[T]``.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, asOf token: HistoryToken) throws -> [T] {
        try fetch(descriptor, asOf: .sequence(token.sequence))
    }

    /// The models `descriptor` describes as they were at `date`: after the last commit made at
    /// or before it (none before the first commit), as ``fetch(_:asOf:)-(_,HistoryToken)`` reads them.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, asOf date: Date) throws -> [T] {
        try fetch(descriptor, asOf: .date(date))
    }

    private func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, asOf position: LogPosition) throws -> [T] {
        let store = self.store
        // The entity's database is opened before the snapshot that reads it begins.
        guard try entity(for: T.self) != nil else { return [] }
        return try store.read { snapshot in
            let sequence = try position.sequence(in: store, snapshot: snapshot)
            return try store.rows(of: ModelRowSource(descriptor), asOf: sequence, in: snapshot)
        }
    }
}
