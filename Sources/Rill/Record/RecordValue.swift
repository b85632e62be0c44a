import Foundation

/// A schema-less view of a record: what the bytes say, without the Swift type that wrote them.
///
/// Used to inspect and render stored records (see `jsonString(pretty:)`) and to rewrite them. Equality and hashing
/// compare floating-point payloads (`float`, `double`, `date`) by bit pattern, so that `NaN` equals itself, `0.0`
/// and `-0.0` differ, and a value always equals its own round trip through bytes.
package enum RecordValue: Hashable, Sendable {
    /// An explicit nil.
    case null
    /// A Bool.
    case bool(Bool)
    /// Any signed integer type (`Int`, `Int8` … `Int64`).
    case int(Int64)
    /// Any unsigned integer type (`UInt`, `UInt8` … `UInt64`).
    case uint(UInt64)
    /// A Float.
    case float(Float)
    /// A Double.
    case double(Double)
    /// A String.
    case string(String)
    /// A `Data` value.
    case data(Data)
    /// A Date, exact to the bit of its reference-date interval.
    case date(Date)
    /// A UUID.
    case uuid(UUID)
    /// A URL, kept as the text it was stored as.
    case url(String)
    /// A decimal number, kept as its text so no precision is lost.
    case decimal(String)
    /// An array, or any unkeyed container.
    case array([RecordValue])
    /// A struct, dictionary or other keyed container: its entries in stored order.
    case map([RecordField])

    /// Parses a whole encoded record (with its version byte). Throws RecordError on malformed/truncated bytes.
    ///
    /// Unlike decoding into a Swift type, this validates everything, including the UTF-8 of every string.
    ///
    /// - Parameter names: the names of the top-level keys met in the records parsed before, to
    ///   take each key's `String` from instead of making it again (see `RecordKeyNames`).
    package init(record bytes: UnsafeRawBufferPointer, names: RecordKeyNames? = nil) throws {
        let reader = RecordReader(bytes)
        let start = try reader.checkVersion()
        var position = start
        self = try Self.parse(reader, at: &position, depth: 0, names: names)
        try reader.checkEnd(position)
    }

    /// Parses only the top-level `fields` of an encoded record whose value is a map, skipping the
    /// others' bytes (their structure is still checked, not the UTF-8 of their strings): what a
    /// predicate that reads those fields needs, at a fraction of the cost of the whole record.
    /// Any other record is parsed whole.
    package init(record bytes: UnsafeRawBufferPointer, fields: Set<String>) throws {
        let reader = RecordReader(bytes)
        let start = try reader.checkVersion()
        guard try reader.byte(at: start) == RecordFormat.Tag.mapBegin else {
            self = try RecordValue(record: bytes)
            return
        }
        var kept: [RecordField] = []
        var position = start + 1
        while try reader.byte(at: position) != RecordFormat.Tag.end {
            let key = try reader.keyRange(at: position)
            try reader.validateUTF8(in: key)
            position = key.upperBound
            if let name = try Self.field(named: key, in: reader, among: fields) {
                kept.append(RecordField(name: name, value: try Self.parse(reader, at: &position, depth: 1)))
            } else {
                position = try reader.skipValue(at: position, depth: 1)
            }
        }
        try reader.checkEnd(position + 1)
        self = .map(kept)
    }

    /// The member of `fields` equal to the key in `key` (valid UTF-8), as `Set.contains` of the
    /// key's `String` would find it, without making that `String` for every key: bytes that
    /// agree are equal strings, and two ASCII texts that differ are unequal ones; only where one
    /// side is not ASCII (`String` compares by canonical equivalence: the Kelvin sign is `K`)
    /// is the key made a `String` and looked up.
    private static func field(
        named key: Range<Int>, in reader: RecordReader, among fields: Set<String>
    ) throws(RecordError) -> String? {
        let bytes = UnsafeRawBufferPointer(rebasing: reader.bytes[key])
        let keyIsASCII = !bytes.contains { $0 >= 0x80 }
        for field in fields {
            // nil: the field's text is not contiguous UTF-8 (a bridged string), or one side is
            // not ASCII.
            let equal = field.utf8.withContiguousStorageIfAvailable { utf8 -> Bool? in
                let name = UnsafeRawBufferPointer(utf8)
                if sameBytes(name, bytes) { return true }
                return keyIsASCII && !name.contains { $0 >= 0x80 } ? false : nil
            }
            switch equal {
            case .some(.some(true)): return field
            case .some(.some(false)): continue
            default:
                let name = try reader.string(in: key)
                return fields.contains(name) ? name : nil
            }
        }
        return nil
    }

    /// Encodes back to record bytes (with version byte); `RecordValue(record: x.recordBytes()) == x`.
    package func recordBytes() -> [UInt8] {
        let sink = RecordSink(capacity: 256)
        sink.write(RecordFormat.version)
        write(to: sink)
        var bytes: [UInt8] = []
        sink.assemble(into: &bytes)
        return bytes
    }

    // MARK: - Equality

    /// Structural equality, bit-exact for floating-point payloads.
    package static func == (lhs: RecordValue, rhs: RecordValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): true
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.uint(let a), .uint(let b)): a == b
        case (.float(let a), .float(let b)): a.bitPattern == b.bitPattern
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)): a == b
        case (.data(let a), .data(let b)): a == b
        case (.date(let a), .date(let b)):
            a.timeIntervalSinceReferenceDate.bitPattern == b.timeIntervalSinceReferenceDate.bitPattern
        case (.uuid(let a), .uuid(let b)): a == b
        case (.url(let a), .url(let b)): a == b
        case (.decimal(let a), .decimal(let b)): a == b
        case (.array(let a), .array(let b)): a == b
        case (.map(let a), .map(let b)): a == b
        default: false
        }
    }

    /// Hashes consistently with `==`: floating-point payloads by bit pattern.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        switch self {
        case .null: break
        case .bool(let value): hasher.combine(value)
        case .int(let value): hasher.combine(value)
        case .uint(let value): hasher.combine(value)
        case .float(let value): hasher.combine(value.bitPattern)
        case .double(let value): hasher.combine(value.bitPattern)
        case .string(let value), .url(let value), .decimal(let value): hasher.combine(value)
        case .data(let value): hasher.combine(value)
        case .date(let value): hasher.combine(value.timeIntervalSinceReferenceDate.bitPattern)
        case .uuid(let value): hasher.combine(value)
        case .array(let value): hasher.combine(value)
        case .map(let value): hasher.combine(value)
        }
    }

    /// Tells the cases apart when hashing, so e.g. `.string("a")` and `.url("a")` hash differently.
    private var kind: UInt8 {
        switch self {
        case .null: RecordFormat.Tag.null
        case .bool: RecordFormat.Tag.trueValue
        case .int: RecordFormat.Tag.signed
        case .uint: RecordFormat.Tag.unsigned
        case .float: RecordFormat.Tag.float
        case .double: RecordFormat.Tag.double
        case .string: RecordFormat.Tag.string
        case .data: RecordFormat.Tag.data
        case .date: RecordFormat.Tag.date
        case .uuid: RecordFormat.Tag.uuid
        case .url: RecordFormat.Tag.url
        case .decimal: RecordFormat.Tag.decimal
        case .array: RecordFormat.Tag.arrayBegin
        case .map: RecordFormat.Tag.mapBegin
        }
    }

    // MARK: - Reading

    /// Parses the value at `position` and moves `position` past it.
    ///
    /// Containers recurse through this function, `parseMap` and `parseArray`, for the first
    /// `RecordFormat.recursionDepth` levels; below those, `parseNested` reads them with a stack
    /// of its own.
    private static func parse(
        _ reader: RecordReader, at position: inout Int, depth: Int, names: RecordKeyNames? = nil
    ) throws(RecordError) -> RecordValue {
        let tag = try reader.byte(at: position)
        switch tag {
        case RecordFormat.Tag.mapBegin, RecordFormat.Tag.arrayBegin:
            if depth >= RecordFormat.recursionDepth { return try parseNested(reader, at: &position, depth: depth) }
            return tag == RecordFormat.Tag.mapBegin
                ? try parseMap(reader, at: &position, depth: depth, names: names)
                : try parseArray(reader, at: &position, depth: depth)
        default:
            return try parseScalar(tag, reader, at: &position)
        }
    }

    /// A container `parseNested` is in: the fields or elements read so far, and for a map the
    /// name of the field whose value comes next.
    private struct OpenContainer {
        var isMap: Bool
        var fields: [RecordField] = []
        var elements: [RecordValue] = []
        var name = ""

        mutating func add(_ value: RecordValue) {
            if isMap {
                fields.append(RecordField(name: name, value: value))
            } else {
                elements.append(value)
            }
        }
    }

    /// Parses the container at `position` (at `depth`, as `parse` counts) and everything in it
    /// with a loop and a stack of open containers, not by recursion.
    private static func parseNested(
        _ reader: RecordReader, at position: inout Int, depth: Int
    ) throws(RecordError) -> RecordValue {
        var open: [OpenContainer] = []
        var tag = try reader.byte(at: position)
        while true {
            if tag == RecordFormat.Tag.mapBegin || tag == RecordFormat.Tag.arrayBegin {
                try reader.checkDepth(depth + open.count + 1, at: position)
                open.append(OpenContainer(isMap: tag == RecordFormat.Tag.mapBegin))
                position += 1
            } else {
                let value = try parseScalar(tag, reader, at: &position)
                open[open.count - 1].add(value)
            }
            // Close every container that ends here, handing each to the one it is in.
            while try reader.byte(at: position) == RecordFormat.Tag.end {
                position += 1
                let closed = open.removeLast()
                let value = closed.isMap ? RecordValue.map(closed.fields) : .array(closed.elements)
                guard !open.isEmpty else { return value }
                open[open.count - 1].add(value)
            }
            if open[open.count - 1].isMap {
                let key = try reader.keyRange(at: position)
                open[open.count - 1].name = try reader.string(in: key)
                position = key.upperBound
            }
            tag = try reader.byte(at: position)
        }
    }

    /// Parses the map at `position`, whose tag is read.
    private static func parseMap(
        _ reader: RecordReader, at position: inout Int, depth: Int, names: RecordKeyNames?
    ) throws(RecordError) -> RecordValue {
        try reader.checkDepth(depth + 1, at: position)
        var fields: [RecordField] = []
        // A model's record has a few fields: one allocation, not one for each doubling.
        fields.reserveCapacity(8)
        position += 1
        while try reader.byte(at: position) != RecordFormat.Tag.end {
            let key = try reader.keyRange(at: position)
            let name: String
            if let names {
                name = try names.name(of: key, at: fields.count, in: reader)
            } else {
                name = try reader.string(in: key)
            }
            position = key.upperBound
            fields.append(RecordField(name: name, value: try parse(reader, at: &position, depth: depth + 1)))
        }
        position += 1
        return .map(fields)
    }

    /// Parses the array at `position`, whose tag is read.
    private static func parseArray(
        _ reader: RecordReader, at position: inout Int, depth: Int
    ) throws(RecordError) -> RecordValue {
        try reader.checkDepth(depth + 1, at: position)
        var elements: [RecordValue] = []
        position += 1
        while try reader.byte(at: position) != RecordFormat.Tag.end {
            elements.append(try parse(reader, at: &position, depth: depth + 1))
        }
        position += 1
        return .array(elements)
    }

    /// Parses the value at `position`, whose tag `tag` is not a container's.
    @inline(never)
    private static func parseScalar(
        _ tag: UInt8, _ reader: RecordReader, at position: inout Int
    ) throws(RecordError) -> RecordValue {
        let offset = position
        let payload = offset + 1
        switch tag {
        case RecordFormat.Tag.null:
            position = payload
            return .null
        case RecordFormat.Tag.falseValue, RecordFormat.Tag.trueValue:
            position = payload
            return .bool(tag == RecordFormat.Tag.trueValue)
        case RecordFormat.Tag.signed:
            let (raw, next) = try reader.varint(at: payload)
            position = next
            return .int(RecordFormat.unzigzag(raw))
        case RecordFormat.Tag.unsigned:
            let (value, next) = try reader.varint(at: payload)
            position = next
            return .uint(value)
        case RecordFormat.Tag.float:
            let bits = try reader.uint32(at: payload)
            position = payload + 4
            return .float(Float(bitPattern: bits))
        case RecordFormat.Tag.double:
            let bits = try reader.uint64(at: payload)
            position = payload + 8
            return .double(Double(bitPattern: bits))
        case RecordFormat.Tag.date:
            let bits = try reader.uint64(at: payload)
            position = payload + 8
            return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits)))
        case RecordFormat.Tag.uuid:
            let uuid = try reader.uuid(at: payload)
            position = payload + 16
            return .uuid(uuid)
        case RecordFormat.Tag.string, RecordFormat.Tag.url, RecordFormat.Tag.decimal:
            let range = try reader.lengthPrefixed(at: payload)
            let text = try reader.string(in: range)
            position = range.upperBound
            switch tag {
            case RecordFormat.Tag.string: return .string(text)
            case RecordFormat.Tag.url: return .url(text)
            default: return .decimal(text)
            }
        case RecordFormat.Tag.data:
            let range = try reader.lengthPrefixed(at: payload)
            position = range.upperBound
            return .data(Data(UnsafeRawBufferPointer(rebasing: reader.bytes[range])))
        case RecordFormat.Tag.end:
            throw RecordError(.invalidStructure, "an end byte where a value was expected", offset: offset)
        default:
            throw RecordError(.unknownTag, RecordFormat.Tag.name(tag), offset: offset)
        }
    }

    // MARK: - Writing

    private func write(to sink: RecordSink) {
        switch self {
        case .null:
            sink.write(RecordFormat.Tag.null)
        case .bool(let value):
            sink.writeBool(value)
        case .int(let value):
            sink.writeSigned(value)
        case .uint(let value):
            sink.writeUnsigned(value)
        case .float(let value):
            sink.writeFloat(value)
        case .double(let value):
            sink.writeDouble(value)
        case .string(let value):
            sink.writeString(value)
        case .data(let value):
            sink.writeData(value)
        case .date(let value):
            sink.writeDate(value)
        case .uuid(let value):
            sink.writeUUID(value)
        case .url(let value):
            sink.writeText(RecordFormat.Tag.url, value)
        case .decimal(let value):
            sink.writeText(RecordFormat.Tag.decimal, value)
        case .array(let elements):
            sink.write(RecordFormat.Tag.arrayBegin)
            for element in elements { element.write(to: sink) }
            sink.write(RecordFormat.Tag.end)
        case .map(let fields):
            sink.write(RecordFormat.Tag.mapBegin)
            for field in fields {
                sink.writeKey(field.name)
                field.value.write(to: sink)
            }
            sink.write(RecordFormat.Tag.end)
        }
    }
}
