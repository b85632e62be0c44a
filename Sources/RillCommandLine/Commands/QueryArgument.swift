import Foundation
import Rill

/// The query text of a command line, or nil after saying on standard error what is wrong with it
/// (the command then exits with the usage status).
func parseQueryArgument(_ text: String) -> Query? {
    do {
        return try QueryParser.parse(text)
    } catch {
        Output.error("bad query\n\(error)")
        return nil
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
