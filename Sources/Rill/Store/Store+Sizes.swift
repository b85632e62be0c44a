import RillStorage

extension Store {
    /// The bytes of the pages that hold the log's commits.
    package func logByteCount() throws -> Int {
        try read { try $0.transaction.byteCount(of: log.database) }
    }

    /// The bytes of the pages that hold the records of `entity` (not its indexes).
    package func recordByteCount(of entity: EntityStorage) throws -> Int {
        try read { try $0.transaction.byteCount(of: entity.database) }
    }
}
