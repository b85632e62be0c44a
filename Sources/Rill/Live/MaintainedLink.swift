import Foundation

/// A followed query that is a `MaintainedQuery`: what the follower asks of it, answered by the
/// maintained query.
protocol MaintainedLink: FollowedQuery {
    associatedtype Source: LiveRowSource
    var query: MaintainedQuery<Source> { get }
}

extension MaintainedLink {
    var entityName: String { query.source.entityName }

    var screen: ChangeScreen { query.screen }

    func attach(to index: HolderIndex, id: Int32) { query.attach(to: index, id: id) }

    func detach() { query.detach() }

    /// A query whose predicate looks through relationships reads the related records.
    var appliesWithoutReading: Bool {
        query.windowStart == 0 && query.windowEnd == nil && query.source.relationshipSlot == nil
    }

    var relatedDependencies: [RelatedDependency] { query.source.relatedDependencies }

    /// `error` as the one a stopped query reports.
    static func failure(_ error: any Error) -> RillError {
        error as? RillError ?? RillError(.storage, "live query failed: \(error)", underlyingError: error)
    }
}
