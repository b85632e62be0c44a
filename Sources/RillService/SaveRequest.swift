import Rill

/// A save as the daemon takes it (`POST /v1/save`): `{"author":…,"changes":[…]}`, or a bare
/// array of changes, each one a ``JSONChange``.
package struct SaveRequest: Sendable {
    /// The author recorded in the commit.
    package var author: String?
    /// The changes, saved together or not at all.
    package var changes: [JSONChange]

    /// A save of `changes` by `author`.
    package init(author: String? = nil, changes: [JSONChange]) {
        self.author = author
        self.changes = changes
    }

    /// Reads a save's body.
    ///
    /// - Throws: ``RillError`` `.invalidRecord` for a body of another shape, an empty list, or a
    ///   change that does not read, named by its place (`change 2: …`).
    package init(json: RecordValue) throws {
        var author: String?
        let list: [RecordValue]
        switch json {
        case .array(let changes): list = changes
        case .map(let fields):
            for field in fields where field.name != "author" && field.name != "changes" {
                throw RillError(.invalidRecord, "a save has no field \"\(field.name)\" (it has author, changes)")
            }
            guard case .array(let changes)? = fields.first(where: { $0.name == "changes" })?.value else {
                throw RillError(.invalidRecord, "a save needs \"changes\", an array")
            }
            list = changes
            switch fields.first(where: { $0.name == "author" })?.value {
            case .string(let name)?: author = name
            case nil, .null?: break
            default: throw RillError(.invalidRecord, "\"author\" must be a string")
            }
        default:
            throw RillError(.invalidRecord, "a save is an object or an array of changes")
        }
        guard !list.isEmpty else { throw RillError(.invalidRecord, "no changes") }
        var changes: [JSONChange] = []
        for (index, value) in list.enumerated() {
            do {
                changes.append(try JSONChange(json: value))
            } catch let error as RillError {
                throw RillError(error.code, "change \(index + 1): \(error.message)")
            }
        }
        self.init(author: author, changes: changes)
    }
}
