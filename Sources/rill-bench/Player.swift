import Foundation
import Rill

/// The model of the history benchmark: a racing game's player and their best lap.
struct Player: PersistentModel {
    var id: Int
    /// Unique: an equality on it returns one row.
    var code: Int
    /// The player's best lap, in milliseconds. Every commit after the load gives one player the
    /// fastest lap yet, so each such commit changes the leaderboard (`sort by lapTime limit 50`).
    var lapTime: Int
    var team: Int
    var name: String

    static let indexes: [ModelIndex<Player>] = [ModelIndex(\.code), ModelIndex(\.lapTime)]
}
