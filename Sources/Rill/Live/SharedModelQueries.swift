import Foundation

/// The maintained results of typed live queries that later live queries of the same descriptor
/// may share, by `ModelRowSource.sharingKey`: one each.
///
/// Owned by the follower's thread.
final class SharedModelQueries {
    private var links: [AnyHashable: AnyObject] = [:]

    func link(for key: AnyHashable) -> AnyObject? { links[key] }

    func add(_ link: AnyObject, for key: AnyHashable) { links[key] = link }

    func remove(_ link: AnyObject, for key: AnyHashable) {
        if links[key] === link { links[key] = nil }
    }

    /// How many there are (for tests).
    var count: Int { links.count }
}
