/// What deleting a model does to the models related to it (see ``ModelRelationship``).
public enum RelationshipDeleteRule: String, Sendable, Codable, CaseIterable {
    /// The references to the deleted model are removed: a to-one reference becomes nil, a to-many
    /// one loses the element. A required reference cannot be removed, so the save fails with
    /// ``RillError/Code-swift.struct/deleteDenied``.
    case nullify
    /// The related models are deleted too, in the same save, and so on through their own rules.
    case cascade
    /// The save fails with ``RillError/Code-swift.struct/deleteDenied`` while a related model
    /// exists, and writes nothing.
    case deny
}
