import Rill

/// A query given on the command line: its text, as given, and the query it parses to.
struct QueryArgument: Sendable {
    /// The text, as given (`rill watch --connect` sends it to the daemon).
    var text: String
    var query: Query

    /// Parses `text`.
    ///
    /// - Throws: `BadQueryArgument` when the text is not a query.
    init(_ text: String) throws(BadQueryArgument) {
        self.text = text
        do {
            query = try QueryParser.parse(text)
        } catch {
            throw BadQueryArgument(error: error)
        }
    }
}

/// The result of `body`, or nil after saying on standard error, as for a query that does not
/// parse, that the query does not fit its entity's fields (`Store.check`); the command then exits
/// with the usage status.
func reportingBadQuery<T>(_ body: () throws -> T) throws -> T? {
    do {
        return try body()
    } catch let error as RillError where error.code == .unknownField || error.code == .kindMismatch {
        Output.error("bad query\n\(error.underlyingError.map { "\($0)" } ?? error.message)")
        return nil
    }
}
