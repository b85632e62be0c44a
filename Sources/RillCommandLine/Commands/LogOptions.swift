import Foundation
import Rill

/// What `rill log` is given.
struct LogOptions: CommandOptions {
    static let store = CommandDescription.Argument.store
    static let since = ValueOption.logPosition(
        "since", help: "Start after this commit, or at this date (default: the beginning).")
    static let until = ValueOption.logPosition(
        "until", help: "End at this commit, or at this date (included; default: the last).")
    static let entity = ValueOption.names(
        "entity", valueName: "names", help: "Only the changes of these entities (comma-separated; default: all).")
    static let author = ValueOption.names(
        "author", valueName: "names", help: "Only the commits saved by these authors (comma-separated; default: all).")
    static let limit = ValueOption.wholeNumber(
        "limit", valueName: "n", help: "Print at most this many commits (default: all).")
    static let beforeAfter = Flag(
        "before-after", help: "Show each update's changed fields before and after, and each deleted record.")
    static let reverse = Flag("reverse", help: "Print the newest commits first.")
    static let follow = Flag("follow", help: "Keep printing commits as they land, until interrupted (exit 0).")

    static let arguments = [store]
    static let options = [
        since.option, until.option, entity.option, author.option, limit.option, beforeAfter.option, reverse.option,
        follow.option,
    ]

    /// The store directory.
    var store: String
    /// Where to start: after a commit, or at a date; nil for the beginning.
    var since: LogPosition?
    /// Where to end, included; nil for the last commit (or never, with `follow`).
    var until: LogPosition?
    /// The entities whose changes to print; nil for all.
    var entities: Set<String>?
    /// The authors whose commits to print; nil for all.
    var authors: Set<String>?
    /// The most commits to print; `Int.max` when not given.
    var limit: Int
    /// Print values before and after each change.
    var beforeAfter: Bool
    /// Newest first.
    var reverse: Bool
    /// Keep printing commits as they land.
    var follow: Bool

    init(_ arguments: ParsedArguments) throws {
        since = try arguments[Self.since]
        until = try arguments[Self.until]
        entities = try arguments[Self.entity]
        authors = try arguments[Self.author]
        limit = try arguments[Self.limit] ?? Int.max
        store = arguments[Self.store]
        beforeAfter = arguments[Self.beforeAfter]
        reverse = arguments[Self.reverse]
        follow = arguments[Self.follow]
        if follow, let conflict = reverse ? "--reverse" : until != nil ? "--until" : nil {
            throw UsageError("--follow prints commits as they land, oldest first: it does not take \(conflict)")
        }
    }
}
