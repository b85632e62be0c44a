/// Two records that a unique index does not allow together: what a ``RillError`` with the code
/// ``RillError/Code/uniqueConflict`` carries (``RillError/uniqueConflict``).
///
/// For example:
///
/// ```swift
/// do {
///     try context.save()
/// } catch let error as RillError {
///     if let conflict = error.uniqueConflict {
///         print("\(conflict.entity) \(conflict.existingIdentifier) already has \(conflict.values)")
///     }
/// }
/// ```
public struct UniqueConflict: Error, Sendable, Hashable, CustomStringConvertible {
    /// The entity's name.
    public var entity: String
    /// The unique index's fields, as stored field paths joined with dots (`["email"]`, `["city", "zip"]`).
    public var fields: [String]
    /// The values the two records share, one for each field, as JSON (`"\"ada@example.com\""`, `"42"`).
    public var values: [String]
    /// The identifier of the record being written (for an index built over stored records, the
    /// second of the two that share the values).
    public var identifier: String
    /// The identifier of the record that already has the values.
    public var existingIdentifier: String

    /// A conflict of `entity`'s unique index on `fields`.
    public init(entity: String, fields: [String], values: [String], identifier: String, existingIdentifier: String) {
        self.entity = entity
        self.fields = fields
        self.values = values
        self.identifier = identifier
        self.existingIdentifier = existingIdentifier
    }

    /// `email = "ada@example.com"`, or `city = "Oslo", zip = "0150"` for a compound index.
    var assignments: String {
        zip(fields, values).map { "\($0) = \($1)" }.joined(separator: ", ")
    }

    public var description: String {
        "\(entity) \(identifier) and \(entity) \(existingIdentifier) both have \(assignments)"
    }
}

extension RillError {
    /// The records a unique index does not allow together, when the error's code is
    /// ``RillError/Code/uniqueConflict``; nil otherwise.
    public var uniqueConflict: UniqueConflict? { underlyingError as? UniqueConflict }
}
