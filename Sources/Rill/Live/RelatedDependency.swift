/// How a live query's results depend on the records of another entity, through a relationship
/// its predicate looks through: the follower then re-tests the query's records that a commit to
/// that entity concerns.
enum RelatedDependency: Hashable, Sendable {
    /// The query's records are referenced by `entity`'s `field` (the query reads an inverse): a
    /// change of such a record concerns the records its references name, before and after.
    case referencedBy(entity: String, field: String)
    /// The query's records reference `entity` through their own `field`: a change of a record
    /// of `entity` concerns the query's records that reference it.
    case references(entity: String, field: String)

    /// The other entity.
    var relatedEntity: String {
        switch self {
        case .referencedBy(let entity, _), .references(let entity, _): entity
        }
    }

    /// The dependency a relationship of the query's entity makes.
    init(_ relationship: RelationshipSchema) {
        if relationship.kind == .inverse {
            self = .referencedBy(entity: relationship.entity, field: relationship.inverseOf ?? "")
        } else {
            self = .references(entity: relationship.entity, field: relationship.field)
        }
    }
}

/// Where a row source finds the relationship loader of the commit being applied: set by the
/// maintained query around each step that tests records, on the thread that owns the snapshot.
final class RelationshipSlot: @unchecked Sendable {
    // Only touched by the follower's thread, which owns the maintained query.
    var loader: RelationshipLoader?
}
