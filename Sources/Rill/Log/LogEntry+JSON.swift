import Foundation

extension LogEntry {
    /// The entry as a schema-less value, for JSON output:
    /// `{"seq":…,"timestamp":…,"author":…,"changes":[{"op":…,"entity":…,"id":…,"fields":[…],"record":{…}}]}`.
    ///
    /// - Throws: `RillError(.corruptStore)` when a record in the entry is unreadable.
    package func jsonValue() throws -> RecordValue {
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
            changeValues.append(.map(changeFields))
        }
        fields.append(RecordField(name: "changes", value: .array(changeValues)))
        return .map(fields)
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
