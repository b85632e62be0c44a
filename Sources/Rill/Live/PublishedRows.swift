/// The results a maintained result last published, which every live query that follows it
/// shows: a commit publishes them once, however many live queries share them.
///
/// Read and written under the follower's publication lock only.
final class PublishedRows: @unchecked Sendable {
    // Sendable: guarded by `LogFollower.publication`.
    var snapshot = RowSnapshot.empty
}
