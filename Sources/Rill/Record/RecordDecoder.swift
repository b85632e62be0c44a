import Foundation

/// The `Decoder` behind `RecordCoder.decode`: reads one value at a fixed offset of the record bytes.
///
/// Like the encoder, values with a native tag are read directly and everything else gets a child decoder positioned
/// at its value. Malformed bytes surface as `RecordError`; well-formed bytes that do not match the requested type
/// surface as `DecodingError`, with the coding path of the offending value.
final class RecordDecoder: RecordDecoderTie, Decoder {
    /// Key bounds (start and end offset of each key's UTF-8, one after the other) of the first
    /// `inlineCapacity` map entries, held in the decoder itself so that scanning a typical map allocates nothing.
    private typealias InlineBounds = (
        Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int, Int,
        Int, Int, Int, Int, Int, Int, Int, Int
    )

    /// How many entries fit in `inlineBounds`; larger maps keep their bounds in `spilledBounds`.
    private static let inlineCapacity = 12

    /// The bytes, shared by all decoders of one record. A root decoder kept for the next record
    /// (`RecordCoder.decode(_:from:reusing:)`) is given that record's bytes.
    @exclusivity(unchecked) private(set) var reader: RecordReader
    /// Offset of this decoder's value; `RecordReader.missingValue` for a `superDecoder` whose key is missing.
    @exclusivity(unchecked) private(set) var offset: Int
    /// Nesting level of this decoder's value, for the `RecordFormat.maxDepth` limit.
    let depth: Int
    private let parent: RecordDecoder?
    private let key: (any CodingKey)?

    // These properties are only touched from synchronous decoding code on one thread, in accesses that never
    // overlap; dynamic exclusivity checks on them cost more than the reads.
    /// Offset just past this decoder's value, once a container has walked it.
    @exclusivity(unchecked) private var end: Int?
    /// Number of map entries found by `scanMap`. An entry's value starts right after its key.
    @exclusivity(unchecked) private var entryCount = 0
    /// Key bounds of the map's entries in stored order, while there are at most `inlineCapacity` of them.
    @exclusivity(unchecked) private var inlineBounds: InlineBounds = (
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
    )
    /// Key bounds of all the map's entries once there are more than `inlineCapacity`.
    @exclusivity(unchecked) private var spilledBounds: [Int] = []
    @exclusivity(unchecked) private(set) var hasScannedMap = false
    /// Where the next key lookup starts: fields are usually read in the order they were written, so starting just
    /// after the previous hit usually finds the key at the first comparison.
    @exclusivity(unchecked) private var lookupHint = 0
    /// While the fields of the map are read by name in the order they are stored, before any scan
    /// (`nextEntryOffset(named:)`): where the next entry starts. 0 before the first read.
    @exclusivity(unchecked) var nextEntry = 0
    /// Whether a keyed container was made over this root's map without scanning it.
    @exclusivity(unchecked) private var deferredScan = false
    /// Whether this root keeps the keyed container it makes for the next record it is reset to
    /// (see `keptContainer(keyedBy:)`): set for the root decoders a fetch reuses.
    @exclusivity(unchecked) var keepsContainer = false
    /// The standard library's box of the keyed container last made over this root's map, its
    /// `Key`, and what ties the box to this decoder while it is lent out.
    @exclusivity(unchecked) var keptBox: AnyObject?
    @exclusivity(unchecked) var keptKey: ObjectIdentifier?
    @exclusivity(unchecked) var keptTie: RecordDecoderTie?
    /// The copy of the record this root reads, when it owns one (`RecordCoder.withOwningRoot`).
    var ownedBytes: RecordBytesCopy?

    init(reader: RecordReader, offset: Int, parent: RecordDecoder?, key: (any CodingKey)?, depth: Int) {
        self.reader = reader
        self.offset = offset
        self.parent = parent
        self.key = key
        self.depth = depth
        super.init()
        decoderPointer = Unmanaged.passUnretained(self).toOpaque()
    }

    /// Points this root decoder, which nothing else holds, at another record, value at `offset`.
    ///
    /// The key bounds are scanned again; `lookupHint` stays, since the records of one fetch
    /// usually store their fields in one order.
    func reset(to reader: RecordReader, offset: Int) {
        self.reader = reader
        self.offset = offset
        end = nil
        entryCount = 0
        hasScannedMap = false
        nextEntry = 0
        deferredScan = false
    }

    // MARK: - Decoder

    /// Built on demand from the parent chain, because it is only needed for errors.
    var codingPath: [any CodingKey] {
        var keys: [any CodingKey] = []
        var node: RecordDecoder? = self
        while let current = node {
            if let key = current.key { keys.append(key) }
            node = current.parent
        }
        return keys.reversed()
    }

    var userInfo: [CodingUserInfoKey: Any] {
        [:]
    }

    /// The record's own map (the root's) is read in stored order as far as its keys are asked
    /// for in that order, and scanned at the first that is not (`fieldOffset(named:)`); the
    /// entries after the last read are checked at the end (`checkTopLevelEnd`). A nested map is
    /// scanned here, as a value of another kind is reported here.
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        if !hasScannedMap {
            if parent == nil, offset >= 0, offset < reader.bytes.count,
                reader.bytes[offset] == RecordFormat.Tag.mapBegin
            {
                deferredScan = true
            } else {
                try scanMap(keyedBy: Key.self)
            }
        }
        if keepsContainer { return keptContainer(keyedBy: Key.self) }
        return KeyedDecodingContainer(RecordKeyedDecodingContainer<Key>(tie: self))
    }

    /// Scans the map unless it has been; a map that does not read is left unscanned, for the read
    /// of a field to report.
    func scanIfNeeded() {
        if !hasScannedMap { _ = try? scanMap(keyedBy: RecordCodingKey.self) }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let tag = try read(RecordCodingKey.absent) { reader, offset in
            try reader.tag(ofValueAt: offset)
        }
        guard tag == RecordFormat.Tag.arrayBegin else {
            throw mismatch(expected: [Any].self, tag: tag, at: offset, key: RecordCodingKey.absent)
        }
        var position = offset + 1
        var count = 0
        try annotating(RecordCodingKey.absent) { () throws(RecordError) in
            while try reader.byte(at: position) != RecordFormat.Tag.end {
                position = try reader.skipValue(at: position, depth: depth + 1)
                count += 1
            }
        }
        end = position + 1
        return RecordUnkeyedDecodingContainer(decoder: self, start: offset + 1, count: count)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        self
    }

    /// Walks this decoder's map once, recording where each key and value sits.
    private func scanMap<Key: CodingKey>(keyedBy keyType: Key.Type) throws {
        let tag = try read(RecordCodingKey.absent) { reader, offset in
            try reader.tag(ofValueAt: offset)
        }
        guard tag == RecordFormat.Tag.mapBegin else {
            throw mismatch(
                expected: [String: Any].self, tag: tag, at: offset, key: RecordCodingKey.absent,
                nullType: KeyedDecodingContainer<Key>.self)
        }
        var count = 0
        var position = offset + 1
        // Local copies: the loop calls out, after which properties would be read again.
        let reader = self.reader
        let childDepth = depth + 1
        try annotating(RecordCodingKey.absent) { () throws(RecordError) in
            while try reader.byte(at: position) != RecordFormat.Tag.end {
                let key = try reader.keyRange(at: position)
                try reader.validateUTF8(in: key)
                appendBounds(key, at: count)
                count += 1
                position = try reader.skipEntryValue(at: key.upperBound, depth: childDepth)
            }
        }
        end = position + 1
        entryCount = count
        hasScannedMap = true
    }

    /// Stores the key bounds of entry number `index` (entries arrive in order).
    @inline(__always)
    private func appendBounds(_ key: Range<Int>, at index: Int) {
        if index < Self.inlineCapacity {
            withUnsafeMutableBytes(of: &inlineBounds) { raw in
                let bounds = raw.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: Int.self)
                bounds[2 &* index] = key.lowerBound
                bounds[2 &* index &+ 1] = key.upperBound
            }
        } else {
            spill(key, at: index)
        }
    }

    /// Moves the bounds to `spilledBounds` once the map has outgrown the inline storage.
    @inline(never)
    private func spill(_ key: Range<Int>, at index: Int) {
        if index == Self.inlineCapacity {
            spilledBounds.removeAll(keepingCapacity: true)
            spilledBounds.reserveCapacity(4 * Self.inlineCapacity)
            withUnsafeMutableBytes(of: &inlineBounds) { raw in
                spilledBounds.append(contentsOf: raw.bindMemory(to: Int.self))
            }
        }
        spilledBounds.append(key.lowerBound)
        spilledBounds.append(key.upperBound)
    }

    /// Runs `body` over the key bounds of the scanned entries (`2 * entryCount` offsets).
    @inline(__always)
    private func withBounds<R>(_ body: (UnsafePointer<Int>) -> R) -> R {
        if entryCount > Self.inlineCapacity {
            return spilledBounds.withUnsafeBufferPointer { body($0.baseAddress.unsafelyUnwrapped) }
        }
        return withUnsafeMutableBytes(of: &inlineBounds) { raw in
            body(UnsafePointer(raw.baseAddress.unsafelyUnwrapped.assumingMemoryBound(to: Int.self)))
        }
    }

    /// Where the keys of the map's entries sit in the record, in stored order.
    var keyRanges: [Range<Int>] {
        withBounds { bounds in
            (0..<entryCount).map { bounds[2 * $0]..<bounds[2 * $0 + 1] }
        }
    }

    /// The offset of the value stored under `key` (see `fieldOffset(named:)`); nil when the map has
    /// no such entry.
    func offset<K: CodingKey>(for key: K) throws -> Int? {
        try fieldOffset(named: key.stringValue)
    }

    /// The offset of the value stored under the key `name`.
    func valueOffset(named name: String) -> Int? {
        let count = entryCount
        guard count > 0 else { return nil }
        let reader = self.reader
        if let offset = name.utf8.withContiguousStorageIfAvailable({ utf8 in
            find(utf8, count: count, in: reader)
        }) {
            return offset
        }
        var name = name
        return name.withUTF8 { find($0, count: count, in: reader) }
    }

    /// The offset of the value whose key is `utf8` among the `count` scanned entries.
    @inline(__always)
    private func find(_ utf8: UnsafeBufferPointer<UInt8>, count: Int, in reader: RecordReader) -> Int? {
        withBounds { bounds -> Int? in
            var index = lookupHint < count ? lookupHint : 0
            for _ in 0..<count {
                let lower = bounds[2 &* index]
                let upper = bounds[2 &* index &+ 1]
                index &+= 1
                if index == count { index = 0 }
                if reader.bytes(in: lower..<upper, equal: utf8) {
                    lookupHint = index
                    return upper
                }
            }
            return nil
        }
    }

    /// A decoder for the value at `offset`, one level deeper.
    func child<K: CodingKey>(at offset: Int, key: K) throws -> RecordDecoder {
        let depth = depth + 1
        try annotating(key) { () throws(RecordError) in try reader.checkDepth(depth, at: offset) }
        return RecordDecoder(
            reader: reader, offset: offset, parent: self, key: RecordCodingKey.optional(key), depth: depth)
    }

    // MARK: - Values

    /// Decodes the whole record value with this decoder as the root, then insists nothing follows it.
    func decodeTopLevel<T: Decodable>(_ type: T.Type) throws -> T {
        let value: T
        if let native = RecordFormat.NativeType(T.self) {
            value = try decodeNative(native, as: T.self, at: offset, key: RecordCodingKey.absent)
        } else {
            value = try T(from: self)
        }
        try checkTopLevelEnd()
        return value
    }

    /// Checks that nothing follows the top-level value.
    private func checkTopLevelEnd() throws {
        if !hasScannedMap {
            if nextEntry != 0 {
                try finishInOrder()
            } else if deferredScan {
                try scanMap(keyedBy: RecordCodingKey.self)
            }
        }
        let knownEnd = end
        try annotating(RecordCodingKey.absent) { () throws(RecordError) in
            if let knownEnd {
                try reader.checkEnd(knownEnd)
            } else {
                try reader.checkEnd(reader.skipValue(at: offset, depth: depth))
            }
        }
    }

    /// Reads the whole record value as the model `T`, through its `init(record:)`, then insists
    /// nothing follows it.
    ///
    /// Kept out of cross-module optimization: Swift 6.3's, with `-enable-testing` in an optimized
    /// build (`swift test -c release`, `make oracle`), crashed the compiler serializing this
    /// function ("Cannot initialize a nonCopyable type with a guaranteed value": the
    /// `ModelRecord` made of the borrowed decoder). Not inlining `ModelRecord.init` avoided it
    /// too, at a retain and a release of the decoder for every row.
    @_semantics("optimize.no.crossmodule")
    func decodeModelTopLevel<T: PersistentModel>(_ type: T.Type) throws -> T {
        let value = try T(record: ModelRecord(decoder: self))
        try checkTopLevelEnd()
        return value
    }

    /// The value of the map entry `name` (see `ModelRecord`).
    func decodeField<T: Decodable>(_ type: T.Type, named name: String) throws -> T {
        guard let offset = try fieldOffset(named: name) else { return try unstoredField(T.self, named: name) }
        return try decodeValue(T.self, at: offset, key: RecordCodingKey(stringValue: name))
    }

    /// A field the record does not hold: what `unstoredValue` gives, else `keyNotFound`. Apart
    /// from `decodeField`: naming `T?` there looked its metadata up for every field read.
    @inline(never)
    private func unstoredField<T: Decodable>(_ type: T.Type, named name: String) throws -> T {
        if let value = Self.unstoredValue(T.self) { return value }
        throw DecodingError.keyNotFound(
            RecordCodingKey(stringValue: name),
            context(RecordCodingKey.absent, "No value associated with key \"\(name)\"."))
    }

    /// The value of the map entry `name`, nil when it is missing or null (see `ModelRecord`).
    func decodeFieldIfPresent<T: Decodable>(_ type: T.Type, named name: String) throws -> T? {
        guard let offset = try fieldOffset(named: name) else { return nil }
        let key = RecordCodingKey(stringValue: name)
        if try read(key, at: offset, { try $0.readNull(at: $1) }) { return Self.storedNull(T.self) }
        return try decodeValue(T.self, at: offset, key: key)
    }

    /// What a value never stored reads as: empty for a `Related` (see `UnstoredValue`), nil for
    /// any other type (a missing key).
    @inline(never)
    static func unstoredValue<T>(_ type: T.Type) -> T? {
        (T.self as? any UnstoredValue.Type)?.unstoredValue as? T
    }

    /// What `decodeIfPresent` gives for a stored null: `.some(nil)` when `T` can itself hold nil,
    /// so that `Int??` keeps all three states, else nil.
    @inline(never)
    static func storedNull<T>(_ type: T.Type) -> T? {
        (T.self as? any ExpressibleByNilLiteral.Type).flatMap { $0.init(nilLiteral: ()) as? T }
    }

    /// Whether the map has an entry `name`; false also when the map does not read.
    func containsField(named name: String) -> Bool {
        if !hasScannedMap, (try? scanMap(keyedBy: RecordCodingKey.self)) == nil { return false }
        return valueOffset(named: name) != nil
    }

    /// Where the value of the map entry `name` starts; nil when the map has no such entry.
    @inline(__always)
    func fieldOffset(named name: String) throws -> Int? {
        if !hasScannedMap {
            if let offset = nextEntryOffset(named: name) { return offset }
            try scanMap(keyedBy: RecordCodingKey.self)
        }
        return valueOffset(named: name)
    }

    // MARK: - Reading a map in stored order
    //
    // A model that reads its own record (`ModelRecord`) usually asks for its fields in the order
    // it wrote them. Each field is then the map's next entry: its key is compared where it
    // stands, and its value skipped to find the entry after, with no scan of the whole map first
    // and no lookup among the scanned keys. Whatever does not fit (another key, the map's end, a
    // key or value that does not read) sends the read to the scan, which reports bytes that do
    // not read exactly as it does without this path. A key read in order is valid UTF-8, being
    // equal to the name asked for; the entries after the last one read are checked as the scan
    // checks them (`finishInOrder`), so the map is checked as a whole either way.

    /// The value offset of the entry `name` when it is the map's next entry in stored order;
    /// nil when it is not, or when something there does not read.
    @inline(__always)
    private func nextEntryOffset(named name: String) -> Int? {
        guard let key = nextKey(named: name),
            let next = try? reader.skipEntryValue(at: key.upperBound, depth: depth &+ 1)
        else { return nil }
        nextEntry = next
        return key.upperBound
    }

    /// Checks the entries after the last one read in order as `scanMap` checks them, and sets
    /// the map's end; the scan itself reports what does not read.
    private func finishInOrder() throws {
        let reader = self.reader
        var position = nextEntry
        let childDepth = depth + 1
        do throws(RecordError) {
            while try reader.byte(at: position) != RecordFormat.Tag.end {
                let key = try reader.keyRange(at: position)
                try reader.validateUTF8(in: key)
                position = try reader.skipEntryValue(at: key.upperBound, depth: childDepth)
            }
            end = position + 1
        } catch {
            try scanMap(keyedBy: RecordCodingKey.self)
        }
    }

    /// Decodes the value at `offset`, through a child decoder unless the format stores the type natively.
    @inline(__always)
    func decodeValue<T: Decodable, K: CodingKey>(_ type: T.Type, at offset: Int, key: K) throws -> T {
        if let native = RecordFormat.NativeType(T.self) {
            return try decodeNative(native, as: T.self, at: offset, key: key)
        }
        return try T(from: child(at: offset, key: key))
    }

    /// Reads a value of a type with a native tag; `native` must be `RecordFormat.NativeType(T.self)`.
    ///
    /// Mirrors `RecordEncoder.encodeDirect`, so the special types are read from their own tags on every path.
    private func decodeNative<T: Decodable, K: CodingKey>(
        _ native: RecordFormat.NativeType, as type: T.Type, at offset: Int, key: K
    ) throws -> T {
        func cast<V>(_ value: V) -> T {
            RecordFormat.identityCast(value, to: T.self)
        }
        // Not through `read`: its closure, this whole switch, was called out of line for each field.
        let reader = self.reader
        do throws(RecordReader.Failure) {
            switch native {
            case .string: return cast(try reader.readString(at: offset))
            case .int: return cast(try reader.readInteger(Int.self, at: offset))
            case .bool: return cast(try reader.readBool(at: offset))
            case .double: return cast(try reader.readDouble(at: offset))
            case .date: return cast(try reader.readDate(at: offset))
            case .uuid: return cast(try reader.readUUID(at: offset))
            case .data: return cast(try reader.readData(at: offset))
            case .url: return cast(try reader.readURL(at: offset))
            case .decimal: return cast(try reader.readDecimal(at: offset))
            case .int64: return cast(try reader.readInteger(Int64.self, at: offset))
            case .uint64: return cast(try reader.readInteger(UInt64.self, at: offset))
            case .uint: return cast(try reader.readInteger(UInt.self, at: offset))
            case .int32: return cast(try reader.readInteger(Int32.self, at: offset))
            case .uint32: return cast(try reader.readInteger(UInt32.self, at: offset))
            case .float: return cast(try reader.readFloat(at: offset))
            case .int16: return cast(try reader.readInteger(Int16.self, at: offset))
            case .uint16: return cast(try reader.readInteger(UInt16.self, at: offset))
            case .int8: return cast(try reader.readInteger(Int8.self, at: offset))
            case .uint8: return cast(try reader.readInteger(UInt8.self, at: offset))
            case .int128, .uint128:
                // `NativeType` only reports these where the types exist.
                guard #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) else {
                    preconditionFailure("128-bit integers are unavailable")
                }
                if native == .int128 { return cast(try reader.readInteger(Int128.self, at: offset)) }
                return cast(try reader.readInteger(UInt128.self, at: offset))
            }
        } catch {
            throw self.error(error, key: key)
        }
    }

    /// Runs a typed read of the value at `offset` (this decoder's own value by default), giving a failure the
    /// coding path of the value under `key`.
    ///
    /// `body` is typed as throwing any error only so that closures need no annotation; readers throw
    /// `RecordReader.Failure`, and anything else passes through unchanged.
    @inline(__always)
    func read<R, K: CodingKey>(_ key: K, at offset: Int? = nil, _ body: (RecordReader, Int) throws -> R) throws -> R {
        do {
            return try body(reader, offset ?? self.offset)
        } catch let failure as RecordReader.Failure {
            throw self.error(failure, key: key)
        }
    }

    // MARK: - Errors

    /// Runs a structural read, giving any `RecordError` it throws the coding path of the value under `key`.
    func annotating<R, K: CodingKey>(
        _ key: K, _ read: () throws(RecordError) -> R
    ) throws(RecordError) -> R {
        do throws(RecordError) {
            return try read()
        } catch {
            throw annotated(error, key: key)
        }
    }

    private func annotated<K: CodingKey>(_ error: RecordError, key: K) -> RecordError {
        var error = error
        if error.codingPath.isEmpty { error.codingPath = RecordError.path(path(adding: key)) }
        return error
    }

    /// The error to throw for a failed read of the value under `key`.
    func error<K: CodingKey>(_ failure: RecordReader.Failure, key: K) -> any Error {
        switch failure {
        case .malformed(let error):
            return annotated(error, key: key)
        case .mismatch(let expected, let tag, let offset):
            return mismatch(expected: expected, tag: tag, at: offset, key: key)
        case .corrupted(let description):
            return DecodingError.dataCorrupted(context(key, description))
        }
    }

    /// The path of this decoder's value, extended by `key` unless it is `RecordCodingKey.absent`.
    func path<K: CodingKey>(adding key: K) -> [any CodingKey] {
        var path = codingPath
        if let key = RecordCodingKey.optional(key) { path.append(key) }
        return path
    }

    /// A `DecodingError` context for the value under `key`.
    func context<K: CodingKey>(_ key: K, _ description: String) -> DecodingError.Context {
        DecodingError.Context(codingPath: path(adding: key), debugDescription: description)
    }

    /// The error for a value whose tag does not fit the requested type.
    ///
    /// Null becomes `valueNotFound`; an end byte or an unknown tag means malformed bytes, so `RecordError`;
    /// anything else is a `typeMismatch`.
    func mismatch<K: CodingKey>(
        expected: Any.Type, tag: UInt8, at offset: Int, key: K, nullType: Any.Type? = nil
    ) -> any Error {
        if tag > RecordFormat.Tag.end {
            return RecordError(
                .unknownTag, RecordFormat.Tag.name(tag), codingPath: RecordError.path(path(adding: key)),
                offset: offset)
        }
        if tag == RecordFormat.Tag.end {
            return RecordError(
                .invalidStructure, "an end byte where a value was expected",
                codingPath: RecordError.path(path(adding: key)), offset: offset)
        }
        if tag == RecordFormat.Tag.null {
            return DecodingError.valueNotFound(
                nullType ?? expected, context(key, "Expected \(expected) value but found null instead."))
        }
        return DecodingError.typeMismatch(
            expected, context(key, "Expected to decode \(expected) but found \(RecordFormat.Tag.name(tag)) instead."))
    }
}
