import Foundation

/// A row of a deep live query with its model, a value of the family's base.
final class FamilyRow<Base>: LiveEntry, @unchecked Sendable {
    // Sendable: immutable; the model is a value of a protocol that refines `PersistentModel`.
    let model: Base

    init(key: [UInt8], model: Base) {
        self.model = model
        super.init(key: key, order: nil)
    }

    /// The model of an entry of a deep query of `Base` (every entry of one is a `FamilyRow<Base>`).
    static func model(_ entry: LiveEntry) -> Base { unsafeDowncast(entry, to: FamilyRow<Base>.self).model }
}
