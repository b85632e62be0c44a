import Foundation

extension PersistentModel {
    /// Why models of this type would not read back as they were stored, for the container to
    /// refuse the type; nil when nothing is wrong or the probe cannot tell (a type that refuses
    /// the placeholders of `ModelSchemaProbe`).
    ///
    /// - The `id` must be read from the record: a fetch, a delete and a replacement name a model
    ///   by it. An `id` with a default value that `init(from:)` does not decode (left out of the
    ///   coding keys, or a `let id = UUID()`, which synthesized `Codable` skips) gives each
    ///   decoded model another one: two decodes of the same placeholders differ.
    /// - The model must be stored as keyed fields (a keyed container): a record's fields are
    ///   what predicates, indexes and the text language read.
    static var identityProblem: String? {
        if let kinds = ModelSchemaProbe.schema(of: Self.self)?.kinds {
            let read: String? =
                switch kinds {
                case .array: "an unkeyed container"
                case .string(let kind) where kind != "any": "a single value"
                default: nil
                }
            if let read {
                return "\(Self.self) is not stored as keyed fields: its init(from:) reads \(read), and a model's "
                    + "Codable must use a keyed container (its fields are what predicates, indexes and queries read)"
            }
        }
        guard let first = ModelSchemaProbe.value(of: Self.self), let second = ModelSchemaProbe.value(of: Self.self),
            first.id != second.id
        else { return nil }
        return "\(Self.self)'s id is not read from its stored record: every decoded \(Self.self) gets a new one (an id "
            + "with a default value that init(from:) does not decode, such as one left out of CodingKeys or a "
            + "`let id = UUID()`); make it a `var` its CodingKeys include, or decode it in init(from:)"
    }
}
