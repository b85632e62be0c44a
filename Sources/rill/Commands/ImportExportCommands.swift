import Foundation
import Rill

/// `rill export`: every record of a store (or of some entities) as NDJSON, each entity preceded
/// by a line describing it, so that `rill import` can rebuild the store elsewhere.
struct ExportCommand: Command {
    let description = CommandDescription(
        name: "export",
        abstract: "Print every record as NDJSON, each entity preceded by its description (for rill import).",
        arguments: [.init(name: "store", help: "The store directory.")],
        trailing: "entity",
        discussion: """
            Lines: {"entity":"Book","identifier":"String","indexes":["author,title"],"fields":{…}}
            for each entity (its identifier kind, indexes and the kinds of its fields: those its
            description declared, then those any of its records show), then one
            {"op":"insert","entity":"Book","record":{…}} per record. Everything is read in one
            snapshot. On a terminal, a progress bar shows on standard error after a second.
            """
    )

    func run(_ arguments: ParsedArguments, output: inout Output) throws -> Int32 {
        let store = try openStore(arguments.positionals[0], readOnly: true)
        var names = Array(arguments.positionals.dropFirst())
        let known = try store.entityNames()
        if names.isEmpty { names = known }
        var entities: [EntityStorage] = []
        for name in names {
            guard let entity = try store.entity(named: name) else { throw try store.unknownEntityError(name) }
            entities.append(entity)
        }
        let total = try entities.reduce(0) { $0 + (try store.recordCount(of: $1)) }
        var progress = Progress(verb: "exported", total: total)
        try store.read { txn in
            for entity in entities {
                let header = RecordValue.map([
                    RecordField(name: "entity", value: .string(entity.name)),
                    RecordField(name: "identifier", value: .string(entity.identifierKind.name)),
                    RecordField(name: "indexes", value: .array(entity.indexes.map { .string($0.name) })),
                    RecordField(
                        name: "fields",
                        value: try store.recordShape(
                            of: entity, learned: RecordShape.learn(from: entity, in: txn, limit: nil)
                        ).jsonValue),
                ])
                output.line(header.jsonString())
                try txn.forEachRecord(of: entity) { key, bytes in
                    let record = try Store.recordValue(bytes, key: key, entity: entity.name)
                    output.line(
                        RecordValue.map([
                            RecordField(name: "op", value: .string("insert")),
                            RecordField(name: "entity", value: .string(entity.name)),
                            RecordField(name: "record", value: record),
                        ]).jsonString())
                    progress.advance()
                    return true
                }
            }
        }
        progress.finish()
        return ExitStatus.success
    }
}

/// `rill import`: NDJSON changes from standard input (or a file), in one atomic save.
struct ImportCommand: Command {
    let description = CommandDescription(
        name: "import",
        abstract: "Save NDJSON changes (as rill export prints them) in one atomic save.",
        arguments: [.init(name: "store", help: "The store directory (created when missing).")],
        options: [
            .init(name: "file", valueName: "path", help: "Read this file instead of standard input."),
            .init(name: "author", valueName: "name", help: "The author recorded in the commit."),
        ],
        discussion: """
            Each line is a change — {"op":"insert"|"update"|"delete","entity":…,"record":{…}}
            or {"op":"delete","entity":…,"id":…} — or an entity's description as rill export
            writes it, which creates the entity (with its indexes) when the store lacks it and
            keeps the kinds of its fields: every later write through JSON (rill insert, the
            daemon) converts values to them.
            Everything — the descriptions, their indexes and field kinds, every change — is
            checked and written in one transaction: an error names the line (and the file,
            entity and field) and leaves the store exactly as it was; an import that creates the
            store leaves no directory behind when it fails. On a terminal, a progress bar shows
            after a second.
            """
    )

    func run(_ arguments: ParsedArguments, output: inout Output) throws -> Int32 {
        let path = arguments.positionals[0]
        let file = arguments.value("file")
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
                changes.append(change)
            } catch let error as RillError {
                throw RillError(error.code, "\(source): \(error.message)", underlyingError: error.underlyingError)
            }
        }
        progress.finish()
        let author = arguments.value("author")
        let entry = try Store.creatingIfMissing(directory: path, options: StoreOptions()) { store in
            let prepared = try store.prepare(changes, declaring: declarations)
            if Terminal.isStandardErrorATerminal, changes.count > 10_000 {
                FileHandle.standardError.write(Data("saving \(changes.count) changes…\n".utf8))
            }
            return try store.commit(prepared, author: author, declaring: declarations)
        }
        output.line(#"{"seq":\#(entry.map { String($0.sequence) } ?? "null")}"#)
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
                indexes.append(
                    index.split(separator: ",", omittingEmptySubsequences: false).map {
                        $0.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
                    })
            }
        default:
            throw RillError(.invalidRecord, "the \"indexes\" of entity \(name) must be an array of strings")
        }
        var shape: RecordShape?
        if let shapeJSON = field("fields") {
            guard let fields = RecordShape(json: shapeJSON) else {
                throw RillError(.invalidRecord, "the \"fields\" of entity \(name) are not field kinds")
            }
            shape = fields
        }
        return try EntityDeclaration(name: name, identifierKind: kind, indexes: indexes, fields: shape, source: source)
    }
}

/// A progress bar on standard error, only on a terminal and only after a second.
struct Progress {
    let verb: String
    let total: Int
    private var done = 0
    private let started = Date()
    private var lastDrawn = Date.distantPast
    private var drawn = false

    init(verb: String, total: Int) {
        self.verb = verb
        self.total = total
    }

    mutating func advance(by count: Int = 1) {
        done += count
        guard done & 1023 == 0, Terminal.isStandardErrorATerminal else { return }
        let now = Date()
        guard now.timeIntervalSince(started) > 1, now.timeIntervalSince(lastDrawn) > 0.1 else { return }
        lastDrawn = now
        draw()
    }

    mutating func finish() {
        guard drawn else { return }
        draw()
        FileHandle.standardError.write(Data("\n".utf8))
    }

    private mutating func draw() {
        drawn = true
        let fraction = total > 0 ? min(Double(done) / Double(total), 1) : 1
        let width = 30
        let filled = Int(fraction * Double(width))
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let text = "\r\(bar) \(Int(fraction * 100))%  \(done)/\(total) \(verb)"
        FileHandle.standardError.write(Data(text.utf8))
    }
}
