import Foundation

/// Makes a value of a `Decodable` type without a record, with a value of its own in every scalar
/// field: the n-th scalar read is `base + n` for an odd `base`, `base + 13n² + n` for an even one
/// (a string `"\u{1}probe:<number>"`, a date that many seconds after the reference date, a UUID
/// whose last bytes are the number, …), so that the field a computed value comes from can be told
/// by its value. Bools are true in the odd probe and false in the even one; an optional is
/// present, an array has one element, a keyed container has every key, a `CaseIterable` enum is
/// its first case.
///
/// Used to learn which stored field a protocol requirement of a family's base reads in each
/// kind (`FamilyProbe`): key paths of requirements have no name to read.
final class DistinctProbeDecoder: Decoder {
    private let base: Int
    private var count = 0
    /// Containers made so far. Past `containerLimit`, arrays are empty and optionals nil: a
    /// type that holds itself (`var replies: [Comment]`) ends there instead of recursing
    /// without end.
    private var containers = 0
    private static let containerLimit = 512
    fileprivate var isExhausted: Bool { containers > Self.containerLimit }
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(base: Int) { self.base = base }

    /// A value of `type`, or nil when its `init(from:)` refuses the probe's values.
    static func value<T: Decodable>(of type: T.Type, base: Int) -> T? {
        try? DistinctProbeDecoder(base: base).decode(type)
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let value = next(type) { return value }
        if let cases = type as? any CaseIterable.Type, let first = Self.firstCase(of: cases) as? T { return first }
        return try T(from: self)
    }

    private static func firstCase<C: CaseIterable>(of type: C.Type) -> Any? { C.allCases.first }

    /// The next distinct value of a scalar type; nil for another type.
    private func next<T>(_ type: T.Type) -> T? {
        count += 1
        // The second probe does not number its fields evenly: a computed value that is another
        // field plus a constant (`id + 2`) then matches a field in one probe at most.
        let number = base + (base % 2 == 1 ? count : 13 * count * count + count)
        let value: Any? =
            switch type {
            case is String.Type: "\u{1}probe:\(number)"
            case is Bool.Type: base % 2 == 1
            case is Int.Type: number
            case is Int8.Type: Int8(truncatingIfNeeded: number)
            case is Int16.Type: Int16(truncatingIfNeeded: number)
            case is Int32.Type: Int32(truncatingIfNeeded: number)
            case is Int64.Type: Int64(number)
            case is UInt.Type: UInt(number)
            case is UInt8.Type: UInt8(truncatingIfNeeded: number)
            case is UInt16.Type: UInt16(truncatingIfNeeded: number)
            case is UInt32.Type: UInt32(truncatingIfNeeded: number)
            case is UInt64.Type: UInt64(number)
            case is Double.Type: Double(number) + 0.5
            case is Float.Type: Float(number % 1_000_000) + 0.5
            case is Decimal.Type: Decimal(number)
            case is Date.Type: Date(timeIntervalSinceReferenceDate: Double(number))
            case is UUID.Type: UUID(uuidString: String(format: "00000000-0000-4000-8000-%012x", number))
            case is URL.Type: URL(string: "https://probe.invalid/\(number)")
            case is Data.Type: Data(String(number).utf8)
            default: nil
            }
        if value == nil { count -= 1 }
        return value as? T
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        containers += 1
        return KeyedDecodingContainer(Keyed<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        containers += 1
        return Unkeyed(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single(decoder: self) }

    private struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: DistinctProbeDecoder
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }
        func contains(_ key: Key) -> Bool { true }
        func decodeNil(forKey key: Key) throws -> Bool { decoder.isExhausted }
        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try decoder.decode(type) }
        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> { try decoder.container(keyedBy: type) }
        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try decoder.unkeyedContainer()
        }
        func superDecoder() throws -> any Decoder { decoder }
        func superDecoder(forKey key: Key) throws -> any Decoder { decoder }
    }

    private struct Unkeyed: UnkeyedDecodingContainer {
        let decoder: DistinctProbeDecoder
        var currentIndex = 0
        var codingPath: [any CodingKey] { [] }
        var count: Int? { decoder.isExhausted ? 0 : 1 }
        var isAtEnd: Bool { currentIndex >= 1 || decoder.isExhausted }
        mutating func decodeNil() throws -> Bool { decoder.isExhausted }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            currentIndex += 1
            return try decoder.decode(type)
        }
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type
        ) throws -> KeyedDecodingContainer<NestedKey> {
            currentIndex += 1
            return try decoder.container(keyedBy: type)
        }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            currentIndex += 1
            return try decoder.unkeyedContainer()
        }
        mutating func superDecoder() throws -> any Decoder { decoder }
    }

    private struct Single: SingleValueDecodingContainer {
        let decoder: DistinctProbeDecoder
        var codingPath: [any CodingKey] { [] }
        func decodeNil() -> Bool { decoder.isExhausted }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decode(type) }
    }
}
