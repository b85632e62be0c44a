import Foundation
import Rill
import RillService

/// `rill import`: NDJSON changes from standard input (or a file), in one atomic save.
struct ImportCommand: Command {
    let description = CommandDescription(
        name: "import",
        abstract: "Save NDJSON changes (as rill export prints them) in one atomic save.",
        arguments: ImportOptions.arguments,
        options: ImportOptions.options,
        discussion: """
            Each line is a change — {"op":"insert"|"update"|"delete","entity":…,"record":{…}}
            or {"op":"delete","entity":…,"id":…} — or an entity's description as rill export
            writes it, which creates the entity (with its indexes) when the store lacks it and
            keeps the kinds of its fields: every later write through JSON (rill insert, the
            daemon) converts values to them. A kind is a name (int, uint, double, float,
            decimal, date, uuid, url, data, string, bool, any), an array's "[kind]" or ["kind"]
            (["uuid", "int"] when its elements take the kinds in turn, as a dictionary keyed by
            UUIDs is stored), or an object for a struct. A description may add fields to a stored entity, but not
            give a field another kind than a stored record holds or than the schema a model
            type registered reads: that import is refused, naming the entity, the field and both
            kinds. Its "unique" ({"isbn":"upsert"}) makes those
            indexes unique; the records it imports are held to them as any write is.
            Everything — the descriptions, their indexes and field kinds, every change — is
            checked and written in one transaction: an error names the line (and the file,
            entity and field) and leaves the store exactly as it was; an import that creates the
            store leaves no directory behind when it fails. On a terminal, a progress bar shows
            after a second.
            """,
        examples: [
            "rill import ./copy --file books.ndjson",
            "rill import ./copy --author migration < books.ndjson",
        ]
    )

    func run(_ options: ImportOptions, output: inout Output) throws -> Int32 {
        let path = options.store
        let file = options.file
        let data: Data
        if let file {
            guard let contents = FileManager.default.contents(atPath: file) else {
                throw RillError(.storage, "cannot read \(file)")
            }
            data = contents
        } else {
            data = FileHandle.standardInput.readDataToEndOfFile()
        }
        let lines: [(number: Int, value: RecordValue)]
        do {
            lines = try JSONReader.parseNumberedLines(data)
        } catch {
            throw RillError(
                .invalidRecord,
                "line \(error.line)\(file.map { " of \($0)" } ?? ""): invalid JSON at column \(error.column): \(error.message)"
            )
        }
        // Everything is read and checked before the store is touched, then written in one transaction.
        var progress = Progress(verb: "read", total: lines.count)
        var changes: [JSONChange] = []
        var declarations: [EntityDeclaration] = []
        for line in lines {
            progress.advance()
            let source = "line \(line.number)" + (file.map { " of \($0)" } ?? "")
            do {
                if case .map(let fields) = line.value, !fields.contains(where: { $0.name == "op" }),
                    fields.contains(where: { $0.name == "identifier" })
                {
                    declarations.append(try Self.declaration(fields, source: source))
                    continue
                }
                var change = try JSONChange(json: line.value)
                change.source = source
                // The records of an export, whole: a null field a record held is stored again.
                change.keepsNulls = true
                changes.append(change)
            } catch let error as RillError {
                throw RillError(error.code, "\(source): \(error.message)", underlyingError: error.underlyingError)
            }
        }
        progress.finish()
        let author = options.author
        let saved = try Store.creatingIfMissing(
            directory: path, options: StoreOptions(), progress: StoreProgressBar.handlerIfTerminal()
        ) { store in
            try store.save(changes, author: author, declaring: declarations) {
                if Terminal.isStandardErrorATerminal, changes.count > 10_000 {
                    FileHandle.standardError.write(Data("saving \(changes.count) changes…\n".utf8))
                }
            }
        }
        output.line(saved.json)
        return ExitStatus.success
    }

    /// An entity's description, as `rill export` writes it: the entity, its identifier kind, its indexes and the
    /// kinds of its fields.
    private static func declaration(_ fields: [RecordField], source: String) throws -> EntityDeclaration {
        func field(_ name: String) -> RecordValue? { fields.first { $0.name == name }?.value }
        guard case .string(let name)? = field("entity"), case .string(let kindName)? = field("identifier"),
            let kind = IdentifierKind.allCases.first(where: { $0.name == kindName })
        else {
            throw RillError(
                .invalidRecord, "an entity description needs \"entity\" and \"identifier\" (Int, String or UUID)")
        }
        var indexes: [[[String]]] = []
        switch field("indexes") {
        case nil, .null?: break
        case .array(let names)?:
            for value in names {
                guard case .string(let index) = value else {
                    throw RillError(
                        .invalidRecord, "the \"indexes\" of entity \(name) must be strings (\"author,title\")")
                }
                indexes.append(FieldPath.paths(fromName: index))
            }
        default:
            throw RillError(.invalidRecord, "the \"indexes\" of entity \(name) must be an array of strings")
        }
        var shape: RecordShape?
        if let shapeJSON = field("fields") {
            do {
                shape = try RecordShape.described(by: shapeJSON)
            } catch {
                throw RillError(.invalidRecord, Self.invalidKindMessage(error, entity: name))
            }
        }
        var uniqueness: [String: UniqueConflictPolicy]?
        switch field("unique") {
        case nil, .null?: break
        case .map(let pairs)?:
            var policies: [String: UniqueConflictPolicy] = [:]
            for pair in pairs {
                guard case .string(let text) = pair.value, let policy = UniqueConflictPolicy(rawValue: text) else {
                    throw RillError(
                        .invalidRecord,
                        "the \"unique\" of entity \(name) maps index names to \"upsert\" or \"fail\" "
                            + "({\"isbn\":\"upsert\"})")
                }
                policies[pair.name] = policy
                let paths = FieldPath.paths(fromName: pair.name)
                if !indexes.contains(paths) { indexes.append(paths) }
            }
            uniqueness = policies
        default:
            throw RillError(
                .invalidRecord, "the \"unique\" of entity \(name) must be an object ({\"isbn\":\"upsert\"})")
        }
        var declaration = try EntityDeclaration(
            name: name, identifierKind: kind, indexes: indexes, fields: shape, source: source)
        declaration.uniqueness = uniqueness
        return declaration
    }

    /// What is wrong with a description's `"fields"`, naming the field and the kind it was given.
    private static func invalidKindMessage(_ error: RecordShape.InvalidKind, entity: String) -> String {
        guard !error.path.isEmpty else {
            return "the \"fields\" of entity \(entity) must be an object of field kinds ({\"title\":\"string\"}); "
                + "got \(error.value.jsonString())"
        }
        return "the \"fields\" of entity \(entity) give field \(error.path) the kind \(error.value.jsonString()), "
            + "which is none of int, uint, double, float, decimal, date, uuid, url, data, string, bool and any "
            + "([kind] or [\"kind\"] for an array, an object for a struct)"
    }
}
