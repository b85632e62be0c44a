import Foundation

/// A row of a live query's results: its identifier's storage key and its order key; its model
/// is in a subclass (`LiveRow<T>`, `LiveRecordRow`).
///
/// Rows are immutable objects of a class that is not generic, so that the structures that hold
/// them (the ordered list, the table by key) are compiled for this one type, whatever the model.
class LiveEntry: @unchecked Sendable {
    // Sendable: immutable, and the model in the subclass is Sendable.
    let key: [UInt8]
    /// Bytes whose order is the row's order in the results (sort values, then identifier), when
    /// the sort allows it; rows are then compared with one `memcmp`.
    let order: [UInt8]?

    init(key: [UInt8], order: [UInt8]?) {
        self.key = key
        self.order = order
    }
}
