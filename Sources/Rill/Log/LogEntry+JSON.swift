import Foundation

extension LogEntry {
    /// The entry as a schema-less value, for JSON output:
    /// `{"seq":…,"timestamp":…,"author":…,"changes":[{"op":…,"entity":…,"id":…,"fields":[…],"record":{…}}]}`.
    ///
    /// With `beforeAfter`, an update also carries `"before"` and `"after"`, each a map of the
    /// changed fields to their values on that side (null for a field absent there), and a delete
    /// `"before"`, the record as it was.
    ///
    /// - Throws: `RillError(.corruptStore)` when a record in the entry is unreadable;
    ///   `.unsupportedFormat` with `beforeAfter` for an entry written before the log kept the
    ///   records before changes.
    package func jsonValue(beforeAfter: Bool = false) throws -> RecordValue {
        var fields = [
            RecordField(name: "seq", value: .uint(sequence)),
            RecordField(name: "timestamp", value: .date(timestamp)),
            RecordField(name: "author", value: author.map { .string($0) } ?? .null),
        ]
        var changeValues: [RecordValue] = []
        changeValues.reserveCapacity(changes.count)
        for change in changes {
            var changeFields = [
                RecordField(name: "op", value: .string(change.kind.name)),
                RecordField(name: "entity", value: .string(change.entity)),
                RecordField(name: "id", value: try Self.identifierValue(change.key, sequence: sequence)),
            ]
            if change.kind == .update {
                changeFields.append(
                    RecordField(name: "fields", value: .array(change.changedFields.map { .string($0) })))
            }
            if let record = change.record {
                changeFields.append(
                    RecordField(name: "record", value: try Self.recordValue(record, sequence: sequence)))
            }
            if beforeAfter, change.kind != .insert {
                changeFields += try beforeAndAfter(of: change)
            }
            changeValues.append(.map(changeFields))
        }
        fields.append(RecordField(name: "changes", value: .array(changeValues)))
        return .map(fields)
    }

    /// The `"before"` (and for an update `"after"`) fields of `change`'s JSON.
    private func beforeAndAfter(of change: Change) throws -> [RecordField] {
        guard holdsBeforeImages, let bytes = change.before else { throw Self.lacksBeforeImages(sequence) }
        let before = try Self.recordValue(bytes, sequence: sequence)
        guard change.kind == .update, let record = change.record else {
            return [RecordField(name: "before", value: before)]
        }
        let after = try Self.recordValue(record, sequence: sequence)
        func changed(_ value: RecordValue) -> RecordValue {
            guard case .map(let fields) = value else { return value }
            return .map(
                change.changedFields.map { name in
                    RecordField(name: name, value: fields.value(named: name) ?? .null)
                })
        }
        return [RecordField(name: "before", value: changed(before)), RecordField(name: "after", value: changed(after))]
    }

    /// An identifier key as a JSON-friendly value: a number, a string, or a UUID.
    package static func identifierValue(_ key: [UInt8], sequence: UInt64? = nil) throws -> RecordValue {
        let identifier = key.withUnsafeBytes { AnyIdentifier(storageKey: $0) }
        switch identifier {
        case .integer(let value): return .int(value)
        case .string(let value): return .string(value)
        case .uuid(let value): return .uuid(value)
        case nil:
            let place = sequence.map { " in log entry \($0)" } ?? ""
            throw RillError(.corruptStore, "an unreadable identifier key\(place)")
        }
    }

    /// A stored record as a schema-less value.
    package static func recordValue(_ record: [UInt8], sequence: UInt64? = nil) throws -> RecordValue {
        do {
            return try record.withUnsafeBytes { try RecordValue(record: $0) }
        } catch {
            let place = sequence.map { " in log entry \($0)" } ?? ""
            throw RillError(.corruptStore, "an unreadable record\(place): \(error)", underlyingError: error)
        }
    }
}
