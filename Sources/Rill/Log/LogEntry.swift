import Foundation

/// One commit of the log: everything one save changed, under one sequence number.
///
/// Layout (version 2): version byte, timestamp (Double, seconds since 1970, little-endian),
/// author (varint length + 1, 0 for none, then UTF-8), change count (varint), then each change:
/// kind byte, entity name (varint length + UTF-8), identifier key (varint length + bytes), for an
/// update the changed field names (varint count, then strings), for an insert or update the record
/// after the change (varint length + bytes), for an update or a delete the record before it
/// (varint length + bytes). Version 1, which stores still hold until they are opened for
/// writing (`Store.upgradeFormat`), lacks the records before. See `Documentation/OnDiskFormat.md`.
package struct LogEntry: Sendable, Hashable {
    /// What a change did to its record.
    package enum Kind: UInt8, Sendable {
        case insert = 1
        case update = 2
        case delete = 3

        package var name: String {
            switch self {
            case .insert: "insert"
            case .update: "update"
            case .delete: "delete"
            }
        }
    }

    /// One record's change within a commit.
    package struct Change: Sendable, Hashable {
        package var kind: Kind
        package var entity: String
        /// The identifier's storage key.
        package var key: [UInt8]
        /// For an update, the top-level fields whose stored value changed (added, changed or removed).
        package var changedFields: [String]
        /// The record after the change; nil for a delete (a tombstone).
        package var record: [UInt8]?
        /// The record before the change, for an update or a delete; nil for an insert, and in an
        /// entry of format 1 (see ``LogEntry/holdsBeforeImages``).
        package var before: [UInt8]?

        package init(
            kind: Kind, entity: String, key: [UInt8], changedFields: [String], record: [UInt8]?, before: [UInt8]?
        ) {
            self.kind = kind
            self.entity = entity
            self.key = key
            self.changedFields = changedFields
            self.record = record
            self.before = before
        }
    }

    /// The format entries are written in.
    package static let formatVersion: UInt8 = 2

    /// The first format whose updates and deletes carry the record before the change.
    static let firstFormatWithBeforeImages: UInt8 = 2

    package var sequence: UInt64
    package var timestamp: Date
    package var author: String?
    package var changes: [Change]
    /// True when every update and delete carries the record before it (``Change/before``): an
    /// entry written in format 2 or later. Entries of format 1 remain only in a store not yet
    /// opened for writing by a version that upgrades it.
    package var holdsBeforeImages: Bool

    package init(sequence: UInt64, timestamp: Date, author: String?, changes: [Change], holdsBeforeImages: Bool = true)
    {
        self.sequence = sequence
        self.timestamp = timestamp
        self.author = author
        self.changes = changes
        self.holdsBeforeImages = holdsBeforeImages
    }

    // MARK: - Encoding

    /// The entry's bytes as the log stores them.
    package var encoded: [UInt8] {
        let size = encodedSize
        return [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            write(into: UnsafeMutableRawBufferPointer(buffer))
            count = size
        }
    }

    /// The exact number of bytes `write(into:)` writes.
    package var encodedSize: Int {
        var size =
            1 + 8 + (author.map { varintSize($0.utf8.count + 1) + $0.utf8.count } ?? 1) + varintSize(changes.count)
        for change in changes {
            size += 1 + varintSize(change.entity.utf8.count) + change.entity.utf8.count
            size += varintSize(change.key.count) + change.key.count
            if change.kind == .update {
                size += varintSize(change.changedFields.count)
                for field in change.changedFields { size += varintSize(field.utf8.count) + field.utf8.count }
            }
            if change.kind != .delete {
                let count = change.record?.count ?? 0
                size += varintSize(count) + count
            }
            if change.kind != .insert {
                let count = change.before?.count ?? 0
                size += varintSize(count) + count
            }
        }
        return size
    }

    /// Writes the entry into `buffer`, which holds exactly `encodedSize` bytes (for example space
    /// reserved in the log, so that a large commit is written once, where it is stored).
    ///
    /// - Precondition: ``holdsBeforeImages``: entries are written in the current format only.
    package func write(into buffer: UnsafeMutableRawBufferPointer) {
        precondition(holdsBeforeImages, "a log entry without the records before its changes cannot be written")
        var writer = RawByteWriter(buffer)
        writer.append(Self.formatVersion)
        writer.appendLittleEndian(timestamp.timeIntervalSince1970.bitPattern)
        if let author {
            writer.appendVarint(UInt64(author.utf8.count) + 1)
            writer.append(author.utf8)
        } else {
            writer.appendVarint(0)
        }
        writer.appendVarint(UInt64(changes.count))
        for change in changes {
            writer.append(change.kind.rawValue)
            writer.appendVarint(UInt64(change.entity.utf8.count))
            writer.append(change.entity.utf8)
            writer.appendVarint(UInt64(change.key.count))
            writer.append(change.key)
            if change.kind == .update {
                writer.appendVarint(UInt64(change.changedFields.count))
                for field in change.changedFields {
                    writer.appendVarint(UInt64(field.utf8.count))
                    writer.append(field.utf8)
                }
            }
            if change.kind != .delete {
                let record = change.record ?? []
                writer.appendVarint(UInt64(record.count))
                writer.append(record)
            }
            if change.kind != .insert {
                let before = change.before ?? []
                writer.appendVarint(UInt64(before.count))
                writer.append(before)
            }
        }
        precondition(
            writer.offset == buffer.count, "log entry size mismatch: wrote \(writer.offset) of \(buffer.count)")
    }

    /// Decodes a stored entry.
    ///
    /// - Throws: `RillError` with code `.corruptStore` when the bytes are not a valid entry.
    package init(sequence: UInt64, bytes: UnsafeRawBufferPointer) throws {
        var reader = ByteReader(bytes)
        do {
            let version = try reader.readByte()
            guard version >= 1, version <= Self.formatVersion else {
                throw RillError(
                    .unsupportedFormat,
                    "log entry \(sequence) has format version \(version); this version of Rill reads 1 to \(Self.formatVersion)"
                )
            }
            let holdsBeforeImages = version >= Self.firstFormatWithBeforeImages
            let timestamp = Date(timeIntervalSince1970: try reader.readDouble())
            let authorLength = try reader.readVarint()
            var author: String?
            if authorLength > 0 {
                let raw = try reader.readBytes(Int(clamping: authorLength - 1))
                author = String(decoding: raw, as: UTF8.self)
            }
            let count = try reader.readVarint()
            var changes: [Change] = []
            changes.reserveCapacity(Int(clamping: min(count, 1 << 20)))
            for _ in 0..<count {
                guard let kind = Kind(rawValue: try reader.readByte()) else {
                    throw ByteReader.Malformed(offset: reader.offset - 1, what: "unknown change kind")
                }
                let entity = try reader.readString()
                let key = Array(try reader.readBlob())
                var fields: [String] = []
                if kind == .update {
                    let fieldCount = try reader.readVarint()
                    for _ in 0..<fieldCount { fields.append(try reader.readString()) }
                }
                let record = kind == .delete ? nil : Array(try reader.readBlob())
                let before = kind == .insert || !holdsBeforeImages ? nil : Array(try reader.readBlob())
                changes.append(
                    Change(kind: kind, entity: entity, key: key, changedFields: fields, record: record, before: before))
            }
            guard reader.isAtEnd else {
                throw ByteReader.Malformed(offset: reader.offset, what: "bytes after the last change")
            }
            self.init(
                sequence: sequence, timestamp: timestamp, author: author, changes: changes,
                holdsBeforeImages: holdsBeforeImages)
        } catch let error as ByteReader.Malformed {
            throw RillError(.corruptStore, "log entry \(sequence) is unreadable: \(error)", underlyingError: error)
        }
    }

    /// The error for a request that needs the record before a change of commit `sequence`, an
    /// entry of format 1, which lacks it.
    package static func lacksBeforeImages(_ sequence: UInt64) -> RillError {
        RillError(
            .unsupportedFormat,
            "commit \(sequence) was written before stores kept the record before each change: "
                + "open the store once with permission to write, which upgrades its log")
    }

    /// The timestamp of a stored entry, read without decoding the rest.
    ///
    /// - Throws: `.corruptStore` when the bytes are too short to hold one.
    package static func timestamp(of bytes: UnsafeRawBufferPointer) throws -> Date {
        guard bytes.count >= 9 else {
            throw RillError(.corruptStore, "a log entry of \(bytes.count) bytes is too short to hold its timestamp")
        }
        let bits = (1..<9).reversed().reduce(UInt64(0)) { $0 << 8 | UInt64(bytes[$1]) }
        return Date(timeIntervalSince1970: Double(bitPattern: bits))
    }

    /// The key under which the entry with `sequence` is stored: 8 bytes, big-endian, so the
    /// log's key order is sequence order.
    package static func key(for sequence: UInt64) -> [UInt8] {
        withUnsafeBytes(of: sequence.bigEndian) { Array($0) }
    }

    /// The sequence number stored in a log key.
    package static func sequence(fromKey key: UnsafeRawBufferPointer) throws -> UInt64 {
        guard key.count == 8 else {
            throw RillError(.corruptStore, "a log key of \(key.count) bytes; log keys are 8 bytes")
        }
        return key.reduce(0) { $0 << 8 | UInt64($1) }
    }
}

/// The number of bytes of the LEB128 varint of `value`.
func varintSize(_ value: Int) -> Int {
    var value = UInt64(value)
    var size = 1
    while value >= 0x80 {
        value >>= 7
        size += 1
    }
    return size
}
