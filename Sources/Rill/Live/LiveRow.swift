import Foundation

/// A row with its model.
final class LiveRow<T: PersistentModel>: LiveEntry, @unchecked Sendable {
    let model: T

    init(key: [UInt8], model: T, order: [UInt8]?) {
        self.model = model
        super.init(key: key, order: order)
    }

    /// The model of an entry of a `T` query (every entry of one is a `LiveRow<T>`).
    static func model(_ entry: LiveEntry) -> T { unsafeDowncast(entry, to: LiveRow<T>.self).model }
}
