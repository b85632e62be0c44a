import Foundation
import Rill

/// The history a request asks for (Documentation/Protocol.md, "GET /v1/history"): its
/// parameters, read into a descriptor.
///
/// `since` (after a sequence, or at or after a date), `until` (up to a sequence, or at or before
/// a date, included), `entity` and `author` (comma-separated names), `limit` (at most this many
/// commits, 1,000 by default, 100,000 at most), `order` (`forward`, the default, or
/// `reverse`) and `before_after` (`true` for the values on both sides of each change).
package struct HistoryRequest: Sendable {
    /// The commits the default limit allows in one answer.
    package static let defaultLimit = 1_000
    /// The most commits one answer may hold.
    package static let maximumLimit = 100_000

    /// What to read. `after` holds a sequence given to `since`, checked against the log when read.
    package var descriptor: HistoryDescriptor
    /// Whether each change carries its values before and after.
    package var beforeAfter: Bool

    /// Reads the parameters of a request.
    ///
    /// - Throws: ``ServiceError`` 400 `badParameter`, naming the parameter and what it takes.
    package init(parameters: [String: String]) throws(ServiceError) {
        func bad(_ name: String, _ takes: String, _ given: String) -> ServiceError {
            ServiceError(status: 400, code: "badParameter", message: "\(name) takes \(takes); got '\(given)'")
        }
        func position(_ name: String) throws(ServiceError) -> LogPosition? {
            guard let text = parameters[name] else { return nil }
            guard let position = LogPosition(parsing: text) else { throw bad(name, LogPosition.expected, text) }
            return position
        }
        func names(_ name: String) throws(ServiceError) -> Set<String>? {
            guard let text = parameters[name] else { return nil }
            guard let names = HistoryDescriptor.names(parsing: text) else {
                throw bad(name, "names separated by commas", text)
            }
            return names
        }
        descriptor = HistoryDescriptor(entityNames: try names("entity"), authors: try names("author"))
        switch try position("since") {
        case .sequence(let sequence)?: descriptor.after = HistoryToken(sequence: sequence)
        case .date(let date)?: descriptor.since = date
        case nil: break
        }
        switch try position("until") {
        case .sequence(let sequence)?: descriptor.through = HistoryToken(sequence: sequence)
        case .date(let date)?: descriptor.until = date
        case nil: break
        }
        let limit = parameters["limit"] ?? String(Self.defaultLimit)
        guard let count = Int(limit), (0...Self.maximumLimit).contains(count) else {
            throw bad("limit", "a whole number from 0 to \(Self.maximumLimit)", limit)
        }
        descriptor.fetchLimit = count
        switch parameters["order"] {
        case nil, "forward": descriptor.sortOrder = .forward
        case "reverse": descriptor.sortOrder = .reverse
        case let other?: throw bad("order", "forward or reverse", other)
        }
        switch parameters["before_after"] {
        case nil, "false", "0": beforeAfter = false
        case "true", "1", "": beforeAfter = true
        case let other?: throw bad("before_after", "true or false", other)
        }
    }

    /// The answer, read in one snapshot: `{"seq":<head>,"commits":[…],"more":<bool>}`, the
    /// commits as `rill log` prints them; `more` is true when the limit cut the answer (ask again
    /// from the last commit given, `since=<its seq>`, or before it with `order=reverse`).
    ///
    /// - Throws: ``RillError`` with `.unknownEntity` when `entity` names one the store does not
    ///   have (a 404, as a query of it is), `.misuse` when `since` is past the log's last commit.
    package func answer(from store: Store) throws -> String {
        try store.requireEntities(descriptor.entityNames)
        let (entries, head) = try store.read { snapshot in
            (try store.history(descriptor, in: snapshot), try store.log.head(in: snapshot))
        }
        var commits: [RecordValue] = []
        commits.reserveCapacity(entries.count)
        for entry in entries { commits.append(try entry.jsonValue(beforeAfter: beforeAfter)) }
        let more = descriptor.fetchLimit.map { entries.count == $0 && $0 > 0 } ?? false
        return RecordValue.map([
            RecordField(name: "seq", value: .uint(head)),
            RecordField(name: "commits", value: .array(commits)),
            RecordField(name: "more", value: .bool(more)),
        ]).jsonString()
    }
}
