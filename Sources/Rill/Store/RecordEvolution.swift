import Foundation

/// How a stored record of an earlier version of its entity reads as the current version: each
/// field the current version added with a default, set to it when the record lacks it; each
/// renamed field read from its earlier name when the record lacks the current one.
///
/// The one rule of evolution, for every reader of records: a model type's
/// ``ModelEvolution`` reads through it before decoding, and the schema-less readers (text
/// queries, text live queries, `rill get`) read through the one the entity's current schema
/// describes (`Store.evolution(of:in:)`). A record that has every evolved field is returned as
/// it is, after one walk over its top-level keys; only a record that lacks one is rebuilt.
package struct RecordEvolution: Sendable, Equatable {
    /// The fields added with a default (by dotted path, `FieldPath.text(of:)`), and the default, in
    /// the order declared.
    package let defaults: [RecordField]
    /// The renamed fields: current name (a dotted path) and the name earlier records use.
    package let renames: [(field: String, from: String)]
    /// The top-level fields the steps add or rename, or add or rename a field inside.
    package let fields: Set<String>
    /// `fields` as UTF-8, for comparing with stored keys without making strings.
    private let names: [[UInt8]]
    /// Whether a step names a nested field: a record's top-level keys do not tell whether it
    /// lacks one, so every record is parsed to find out.
    private let isNested: Bool

    /// An evolution of these steps; nil when there are none (nothing to read differently).
    ///
    /// A field is named by its dotted path (`address.city`): a nested field is added in, or
    /// renamed within, the struct that holds it (a rename's `from` is the earlier name there).
    package init?(defaults: [RecordField], renames: [(field: String, from: String)]) {
        guard !defaults.isEmpty || !renames.isEmpty else { return nil }
        self.defaults = defaults
        self.renames = renames
        let paths = (defaults.map(\.name) + renames.map(\.field)).map(FieldPath.path(fromText:))
        fields = Set(paths.map { $0[0] })
        names = fields.sorted().map { Array($0.utf8) }
        isNested = paths.contains { $0.count > 1 }
    }

    /// The evolution an entity's schema describes; nil when it describes none.
    package init?(schema: EntitySchema) {
        self.init(
            defaults: schema.defaulted.compactMap { name in
                schema.defaults[name].map { RecordField(name: name, value: $0) }
            },
            renames: schema.renamed.sorted { $0.key < $1.key }.map { (field: $0.key, from: $0.value) })
    }

    package static func == (lhs: RecordEvolution, rhs: RecordEvolution) -> Bool {
        lhs.defaults == rhs.defaults && lhs.renames.elementsEqual(rhs.renames) { $0 == $1 }
    }

    // MARK: - Reading

    /// `record` as the current version reads it; nil when it needs nothing (it has every evolved
    /// field, or it is not a map of fields) — the common case, which costs a walk over its keys.
    package func evolve(_ record: UnsafeRawBufferPointer) -> [UInt8]? {
        guard lacksField(record), let value = try? RecordValue(record: record), case .map = value else { return nil }
        let evolved = evolve(value)
        return evolved == value ? nil : evolved.recordBytes()
    }

    /// `record` (a schema-less record of the entity) as the current version reads it.
    package func evolve(_ record: RecordValue) -> RecordValue {
        var value = record
        var changed = false
        for rename in renames {
            let path = FieldPath.path(fromText: rename.field)
            changed =
                Self.modify(&value, parentOf: path[...]) { fields in
                    guard !fields.contains(where: { $0.name == path.last }),
                        let index = fields.firstIndex(where: { $0.name == rename.from })
                    else { return false }
                    fields[index].name = path[path.count - 1]
                    return true
                } || changed
        }
        for field in defaults {
            let path = FieldPath.path(fromText: field.name)
            changed =
                Self.modify(&value, parentOf: path[...]) { fields in
                    guard !fields.contains(where: { $0.name == path.last }) else { return false }
                    fields.append(RecordField(name: path[path.count - 1], value: field.value))
                    return true
                } || changed
        }
        return changed ? value : record
    }

    /// Calls `body` with the fields of the map holding the last component of `path` inside
    /// `value`, when every map on the way is there; returns whether `body` changed them.
    private static func modify(
        _ value: inout RecordValue, parentOf path: ArraySlice<String>, _ body: (inout [RecordField]) -> Bool
    ) -> Bool {
        guard case .map(var fields) = value else { return false }
        let changed: Bool
        if path.count == 1 {
            changed = body(&fields)
        } else {
            guard let index = fields.firstIndex(where: { $0.name == path.first }) else { return false }
            changed = modify(&fields[index].value, parentOf: path.dropFirst(), body)
        }
        if changed { value = .map(fields) }
        return changed
    }

    /// Whether any of `used` (top-level fields a query reads; nil: any) is an evolved field:
    /// such a query reads records as the current version does, not stored bytes or an index.
    package func touches(_ used: Set<String>?) -> Bool {
        guard let used else { return true }
        return !used.isDisjoint(with: fields)
    }

    /// `used` with the earlier names of the renamed fields among it: a change an earlier writer
    /// makes to the old name changes the field as the current version reads it.
    package func dependencies(_ used: Set<String>?) -> Set<String>? {
        guard var used else { return nil }
        for rename in renames where used.contains(rename.field) && !rename.field.contains(".") {
            used.insert(rename.from)
        }
        return used
    }

    /// Whether the top-level map in `record` lacks one of the evolved fields (false for bytes
    /// that are not a readable map: they are left to the reader's own error).
    private func lacksField(_ record: UnsafeRawBufferPointer) -> Bool {
        if isNested { return true }
        let reader = RecordReader(record)
        do {
            let start = try reader.checkVersion()
            guard try reader.byte(at: start) == RecordFormat.Tag.mapBegin else { return false }
            var found = 0
            var position = start + 1
            while try reader.byte(at: position) != RecordFormat.Tag.end {
                let key = try reader.keyRange(at: position)
                for name in names {
                    let equal = name.withUnsafeBufferPointer { reader.bytes(in: key, equal: $0) }
                    if equal {
                        found += 1
                        break
                    }
                }
                if found == names.count { return false }
                position = try reader.skipEntryValue(at: key.upperBound, depth: 1)
            }
            return true
        } catch {
            return false
        }
    }
}
