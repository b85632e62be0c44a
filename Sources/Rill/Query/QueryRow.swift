/// One record of a query's results.
package struct QueryRow: Sendable {
    /// The identifier key.
    package var key: [UInt8]
    /// The record, schema-less.
    package var record: RecordValue

    package init(key: [UInt8], record: RecordValue) {
        self.key = key
        self.record = record
    }
}
