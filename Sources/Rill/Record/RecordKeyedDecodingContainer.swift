import Foundation

/// Reads map entries: a record's own map in stored order where its keys are asked for in that
/// order (`RecordDecoder.nextField`), else, as a nested map's always, located by the decoder's
/// one-time scan of the map.
///
/// `decodeIfPresent` is implemented here rather than inherited: the protocol's default treats a stored null as
/// "absent" for every `T`, which would turn `.some(.none)` of a double optional into `.none`.
struct RecordKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    // The only stored property, one reference: the standard library's type-erasing box copies
    // this struct on every call. The entries live on the decoder, reached through `tie` (see
    // `RecordDecoder.keptContainer(keyedBy:)`).
    private let tie: RecordDecoderTie

    init(tie: RecordDecoderTie) {
        self.tie = tie
    }

    /// Runs `body` with the decoder, borrowed from the tie without counting a reference.
    @inline(__always)
    private func withDecoder<R>(_ body: (RecordDecoder) throws -> R) rethrows -> R {
        try tie.withDecoder(body)
    }

    var codingPath: [any CodingKey] {
        withDecoder { decoder in
            decoder.codingPath
        }
    }

    /// Keys in stored order; a stored key that `Key` does not know is left out, as `Key(stringValue:)` decides.
    var allKeys: [Key] {
        withDecoder { decoder in
            decoder.scanIfNeeded()
            return decoder.keyRanges.compactMap { range in
                (try? decoder.reader.string(in: range)).flatMap { Key(stringValue: $0) }
            }
        }
    }

    func contains(_ key: Key) -> Bool {
        withDecoder { decoder in
            decoder.containsField(named: key.stringValue)
        }
    }

    private func offset(of key: Key) throws -> Int {
        try withDecoder { decoder in
            guard let offset = try decoder.offset(for: key) else {
                throw DecodingError.keyNotFound(
                    key,
                    DecodingError.Context(
                        codingPath: codingPath, debugDescription: "No value associated with key \"\(key.stringValue)\"."
                    ))
            }
            return offset
        }
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        try read(key) { try $0.readNull(at: $1) }
    }

    /// Reads the value under `key` with a typed reader, giving failures the value's coding path.
    @inline(__always)
    private func read<R>(_ key: Key, _ body: (RecordReader, Int) throws -> R) throws -> R {
        try withDecoder { decoder in
            try decoder.read(key, at: offset(of: key), body)
        }
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
        try withDecoder { decoder in
            try decoder.nextField(named: key.stringValue, { $0.nextBool(at: $1) })
                ?? read(key) { try $0.readBool(at: $1) }
        }
    }

    func decode(_ type: String.Type, forKey key: Key) throws -> String {
        try withDecoder { decoder in
            try decoder.nextField(named: key.stringValue, { $0.nextString(at: $1) })
                ?? read(key) { try $0.readString(at: $1) }
        }
    }

    func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
        try withDecoder { decoder in
            try decoder.nextField(named: key.stringValue, { $0.nextDouble(at: $1) })
                ?? read(key) { try $0.readDouble(at: $1) }
        }
    }

    func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
        try read(key) { try $0.readFloat(at: $1) }
    }

    func decode(_ type: Int.Type, forKey key: Key) throws -> Int {
        try withDecoder { decoder in
            try decoder.nextField(named: key.stringValue, { $0.nextInteger(Int.self, at: $1) })
                ?? read(key) { try $0.readInteger(Int.self, at: $1) }
        }
    }

    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 {
        try read(key) { try $0.readInteger(Int8.self, at: $1) }
    }

    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 {
        try read(key) { try $0.readInteger(Int16.self, at: $1) }
    }

    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 {
        try read(key) { try $0.readInteger(Int32.self, at: $1) }
    }

    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
        try withDecoder { decoder in
            try decoder.nextField(named: key.stringValue, { $0.nextInteger(Int64.self, at: $1) })
                ?? read(key) { try $0.readInteger(Int64.self, at: $1) }
        }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 {
        try read(key) { try $0.readInteger(Int128.self, at: $1) }
    }

    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt {
        try read(key) { try $0.readInteger(UInt.self, at: $1) }
    }

    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 {
        try read(key) { try $0.readInteger(UInt8.self, at: $1) }
    }

    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 {
        try read(key) { try $0.readInteger(UInt16.self, at: $1) }
    }

    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 {
        try read(key) { try $0.readInteger(UInt32.self, at: $1) }
    }

    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 {
        try read(key) { try $0.readInteger(UInt64.self, at: $1) }
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 {
        try read(key) { try $0.readInteger(UInt128.self, at: $1) }
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try withDecoder { decoder in
            // The native types `Decodable` reads through this method, read in stored order.
            if T.self == Date.self, let date = decoder.nextField(named: key.stringValue, { $0.nextDate(at: $1) }) {
                return RecordFormat.identityCast(date, to: T.self)
            }
            if T.self == UUID.self, let uuid = decoder.nextField(named: key.stringValue, { $0.nextUUID(at: $1) }) {
                return RecordFormat.identityCast(uuid, to: T.self)
            }
            guard let offset = try decoder.offset(for: key) else { return try decodeUnstored(T.self, forKey: key) }
            return try decoder.decodeValue(T.self, at: offset, key: key)
        }
    }

    /// A value never stored: read empty (see `UnstoredValue`), or the error of a missing key.
    /// Apart from `decode`: a generic function finds the metadata of every generic type its body
    /// names when it is called (`T?` here), and a record's every field of a type of its own is
    /// decoded through `decode`.
    @inline(never)
    private func decodeUnstored<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try withDecoder { decoder in
            if let value = RecordDecoder.unstoredValue(T.self) { return value }
            return try decoder.decodeValue(T.self, at: self.offset(of: key), key: key)
        }
    }

    // MARK: - decodeIfPresent

    /// One lookup instead of the three (`contains`, `decodeNil`, `decode`) the protocol's defaults make.
    @inline(__always)
    private func readIfPresent<R>(
        _ key: Key, _ body: (RecordReader, Int) throws -> R
    ) throws -> R? {
        try withDecoder { decoder in
            guard let offset = try decoder.offset(for: key) else { return nil }
            return try decoder.read(key, at: offset) { reader, offset in
                try reader.readNull(at: offset) ? nil : body(reader, offset)
            }
        }
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? {
        try withDecoder { decoder in
            if let value = decoder.nextFieldIfPresent(named: key.stringValue, { $0.nextBool(at: $1) }) { return value }
            return try readIfPresent(key) { try $0.readBool(at: $1) }
        }
    }

    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? {
        try withDecoder { decoder in
            if let value = decoder.nextFieldIfPresent(named: key.stringValue, { $0.nextString(at: $1) }) {
                return value
            }
            return try readIfPresent(key) { try $0.readString(at: $1) }
        }
    }

    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? {
        try withDecoder { decoder in
            if let value = decoder.nextFieldIfPresent(named: key.stringValue, { $0.nextDouble(at: $1) }) {
                return value
            }
            return try readIfPresent(key) { try $0.readDouble(at: $1) }
        }
    }

    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? {
        try readIfPresent(key) { try $0.readFloat(at: $1) }
    }

    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? {
        try withDecoder { decoder in
            if let value = decoder.nextFieldIfPresent(named: key.stringValue, { $0.nextInteger(Int.self, at: $1) }) {
                return value
            }
            return try readIfPresent(key) { try $0.readInteger(Int.self, at: $1) }
        }
    }

    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? {
        try readIfPresent(key) { try $0.readInteger(Int8.self, at: $1) }
    }

    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? {
        try readIfPresent(key) { try $0.readInteger(Int16.self, at: $1) }
    }

    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? {
        try readIfPresent(key) { try $0.readInteger(Int32.self, at: $1) }
    }

    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? {
        try withDecoder { decoder in
            if let value = decoder.nextFieldIfPresent(named: key.stringValue, { $0.nextInteger(Int64.self, at: $1) }) {
                return value
            }
            return try readIfPresent(key) { try $0.readInteger(Int64.self, at: $1) }
        }
    }

    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? {
        try readIfPresent(key) { try $0.readInteger(UInt.self, at: $1) }
    }

    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? {
        try readIfPresent(key) { try $0.readInteger(UInt8.self, at: $1) }
    }

    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? {
        try readIfPresent(key) { try $0.readInteger(UInt16.self, at: $1) }
    }

    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? {
        try readIfPresent(key) { try $0.readInteger(UInt32.self, at: $1) }
    }

    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? {
        try readIfPresent(key) { try $0.readInteger(UInt64.self, at: $1) }
    }

    /// A stored null decodes as `.some(nil)` when `T` can itself hold nil, so `Int??` keeps all three states.
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try withDecoder { decoder in
            if T.self == Date.self,
                let date = decoder.nextFieldIfPresent(named: key.stringValue, { $0.nextDate(at: $1) })
            {
                return date.map { RecordFormat.identityCast($0, to: T.self) }
            }
            if T.self == UUID.self,
                let uuid = decoder.nextFieldIfPresent(named: key.stringValue, { $0.nextUUID(at: $1) })
            {
                return uuid.map { RecordFormat.identityCast($0, to: T.self) }
            }
            guard let offset = try decoder.offset(for: key) else { return nil }
            if try decoder.read(key, at: offset, { try $0.readNull(at: $1) }) {
                return RecordDecoder.storedNull(T.self)
            }
            return try decoder.decodeValue(T.self, at: offset, key: key)
        }
    }

    // MARK: - Nesting

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        try withDecoder { decoder in
            try decoder.child(at: offset(of: key), key: key).container(keyedBy: NestedKey.self)
        }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try withDecoder { decoder in
            try decoder.child(at: offset(of: key), key: key).unkeyedContainer()
        }
    }

    /// A missing `super` entry yields a decoder over null rather than an error, as JSONDecoder does.
    func superDecoder() throws -> any Decoder {
        try withDecoder { decoder in
            let key = RecordCodingKey.superKey
            return try decoder.child(at: decoder.offset(for: key) ?? RecordReader.missingValue, key: key)
        }
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try withDecoder { decoder in
            try decoder.child(at: decoder.offset(for: key) ?? RecordReader.missingValue, key: key)
        }
    }
}
