import Foundation

/// A row of a text query: the record without a model type.
final class LiveRecordRow: LiveEntry, @unchecked Sendable {
    // Sendable: immutable.
    let record: RecordValue

    init(key: [UInt8], record: RecordValue) {
        self.record = record
        super.init(key: key, order: nil)
    }
}
