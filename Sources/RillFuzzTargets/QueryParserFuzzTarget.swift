import Rill

/// The text query parser: any text parses or throws a `QueryParseError`, never crashes, and a
/// query that parses prints (`Query.text`, `QueryNode.description`) as text that parses back to
/// an equal query: parse(print(parse(s))) == parse(s). The same holds for a lone predicate.
///
/// Plain ASCII text, read from its bytes, parses as it does read through its characters: to the
/// same query, or to the same error.
///
/// Each input is checked twice: as the text of a query, and as the choices of a query written
/// along the grammar (`QueryTextBuilder`), which random bytes seldom spell.
package enum QueryParserFuzzTarget {
    package static func run(_ data: [UInt8]) throws {
        try check(String(decoding: data, as: UTF8.self))
        var builder = QueryTextBuilder(FuzzInput(data))
        try check(builder.query())
    }

    private static func check(_ text: String) throws {
        let viaBytes = Result { () throws(QueryParseError) in try QueryParser.parse(text, readsBytes: true) }
        let viaCharacters = Result { () throws(QueryParseError) in try QueryParser.parse(text, readsBytes: false) }
        guard viaBytes == viaCharacters else {
            throw FuzzFailure(
                "\(debug(text)) parses as \(viaBytes) from its bytes, as \(viaCharacters) through its characters")
        }
        if let query = try? QueryParser.parse(text) {
            let printed = query.text
            let again: Query
            do {
                again = try QueryParser.parse(printed)
            } catch {
                throw FuzzFailure("\(debug(text)) printed as \(debug(printed)), which does not parse: \(error)")
            }
            guard again == query else {
                throw FuzzFailure(
                    "\(debug(text)) printed as \(debug(printed)) parses to another query:\n\(query)\n\(again)")
            }
        }
        if let predicate = try? QueryParser.parsePredicate(text) {
            let printed = predicate.description
            let again: QueryNode
            do {
                again = try QueryParser.parsePredicate(printed)
            } catch {
                throw FuzzFailure("\(debug(text)) printed as \(debug(printed)), which does not parse: \(error)")
            }
            guard again == predicate else {
                throw FuzzFailure(
                    "\(debug(text)) printed as \(debug(printed)) parses to another predicate:\n\(predicate)\n\(again)")
            }
        }
    }

    private static func debug(_ text: String) -> String { String(reflecting: text) }
}
