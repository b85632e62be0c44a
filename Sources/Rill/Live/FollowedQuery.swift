import Foundation

/// A live query as the follower sees it, whatever its model type.
protocol FollowedQuery: AnyObject {
    var entityName: String { get }
    /// Applies one commit's changes to the query's entity; a publication when the results changed.
    func apply(_ changes: [DecodedChange], commit: CommitContext) throws -> LivePublication?
    /// The test of whether an insert or update of a record the query does not hold could affect it.
    var screen: ChangeScreen { get }
    /// Enters the query's held records in `index`, and keeps them there, as `id`.
    func attach(to index: HolderIndex, id: Int32)
    /// Takes the query's held records out of its index.
    func detach()
    /// Stops the query with an error (its observers are told).
    func fail(_ error: any Error) -> LivePublication
    /// Whether the query, stopped by `error`, may follow again once the store reads (a record
    /// it could not decode, or on which its predicate threw, that a later commit may fix): it
    /// is then suspended, not let go of, and `recover` is tried after commits to its entity.
    /// Also asked of `.historyCompacted` (commits it had not read were compacted away): a query
    /// that can is loaded again at once, the others stop.
    func canRecover(from error: any Error) -> Bool
    /// Loads the query again in `txn`, as of `sequence`; the publication of its results, with
    /// the change from the results it published last (the records of `changed` written since;
    /// when `changed` is nil, any record may have changed), or a throw when it still cannot read.
    func recover(in txn: StoreSnapshot, sequence: UInt64, changed: Set<[UInt8]>?) throws -> LivePublication?
    /// True when applying a commit never reads the store (the query has no window to refill):
    /// it may then apply on another thread than the follower's, which owns the transaction.
    var appliesWithoutReading: Bool { get }
    /// The other entities whose commits can change the query's results (see `RelatedDependency`).
    var relatedDependencies: [RelatedDependency] { get }
}

extension FollowedQuery {
    var relatedDependencies: [RelatedDependency] { [] }

    func canRecover(from error: any Error) -> Bool { false }

    func recover(in txn: StoreSnapshot, sequence: UInt64, changed: Set<[UInt8]>?) throws -> LivePublication? { nil }
}
