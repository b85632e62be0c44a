import Foundation

/// Learns the fields of a `Decodable` model type without an instance of it: decodes the type
/// from a decoder that answers every request with a placeholder and writes down what was asked
/// — each key, the kind of value it was decoded as, whether it was optional (`decodeIfPresent`,
/// or a `nil` test), and the shapes of nested structs and array elements.
///
/// What it learns is what the synthesized (or hand-written) `init(from:)` reads, which is what
/// the store must hold. Kinds follow the record format: signed integers `int`, unsigned `uint`,
/// `double`, `float`, `decimal`, `date`, `uuid`, `url`, `data`, `string`, `bool`; a dictionary
/// keyed by strings (its keys unknown beforehand) is `any`. An enum that is `CaseIterable` is
/// probed with its first case; any other type whose `init(from:)` refuses the placeholders makes
/// the probe fail (nil), and the entity then has no schema from its model.
enum ModelSchemaProbe {
    /// What the probe learned of a type: its kinds (`RecordShape.jsonValue`'s form) and the
    /// dotted paths of its optional fields.
    struct Schema: Sendable, Equatable {
        var kinds: RecordValue
        var optional: [String]
    }

    /// A value of `type` made of the placeholders, with the other placeholder of each scalar in
    /// the field at `varied` and everything under it (see `placeholder(_:varied:)`); nil when
    /// the type refuses them. `StoredFieldProbe` compares the two to learn which field a
    /// property reads.
    static func value<T: Decodable>(of type: T.Type, varying varied: [String]? = nil) -> T? {
        $varied.withValue(varied) { try? T(from: ProbeDecoder(node: Node(), path: [])) }
    }

    /// How deep the probe reads (keys and array elements): past it, arrays are empty and
    /// optionals nil, so that a type that holds itself (`var replies: [Comment]`) ends there
    /// instead of recursing without end; a value it must still read twice as deep fails the
    /// probe.
    static let depthLimit = 24

    /// The field whose scalars take their other placeholder, in `value(of:varying:)`.
    @TaskLocal private static var varied: [String]?

    static func schema<T: Decodable>(of type: T.Type) -> Schema? {
        let root = Node()
        do {
            _ = try T(from: ProbeDecoder(node: root, path: []))
        } catch {
            return nil
        }
        var optional: [String] = []
        let kinds = root.kinds(path: [], optional: &optional)
        return Schema(kinds: kinds, optional: optional)
    }

    /// What was learned of one value.
    final class Node {
        enum Kind {
            case unknown
            case scalar(String)
            case keyed([(name: String, node: Node)])
            case array(Node)
            case dynamic
        }

        var kind = Kind.unknown
        var isOptional = false

        func child(_ name: String) -> Node {
            if case .keyed(var fields) = kind {
                if let existing = fields.first(where: { $0.name == name }) { return existing.node }
                let node = Node()
                fields.append((name, node))
                kind = .keyed(fields)
                return node
            }
            let node = Node()
            kind = .keyed([(name, node)])
            return node
        }

        func kinds(path: [String], optional: inout [String]) -> RecordValue {
            switch kind {
            case .unknown, .dynamic: return .string("any")
            case .scalar(let name): return .string(name)
            case .array(let element): return .array([element.kinds(path: path + ["[]"], optional: &optional)])
            case .keyed(let fields):
                var values: [RecordField] = []
                for (name, node) in fields {
                    if node.isOptional { optional.append((path + [name]).joined(separator: ".")) }
                    values.append(RecordField(name: name, value: node.kinds(path: path + [name], optional: &optional)))
                }
                return .map(values)
            }
        }
    }

    /// The placeholder a scalar of `type` decodes as, with its kind's name; nil for another type.
    /// `varied`, the other placeholder: as plain (`"0"`, `1`, `true`, a second later), so that a
    /// type that reads the first reads it too.
    static func placeholder<T>(_ type: T.Type, varied: Bool = false) -> (value: T, kind: String)? {
        func pair(_ value: Any, _ kind: String) -> (T, String)? { (value as? T).map { ($0, kind) } }
        let n = varied ? 1 : 0
        switch type {
        case is String.Type: return pair(varied ? "0" : "", "string")
        case is Bool.Type: return pair(varied, "bool")
        case is Int.Type: return pair(Int(n), "int")
        case is Int8.Type: return pair(Int8(n), "int")
        case is Int16.Type: return pair(Int16(n), "int")
        case is Int32.Type: return pair(Int32(n), "int")
        case is Int64.Type: return pair(Int64(n), "int")
        case is UInt.Type: return pair(UInt(n), "uint")
        case is UInt8.Type: return pair(UInt8(n), "uint")
        case is UInt16.Type: return pair(UInt16(n), "uint")
        case is UInt32.Type: return pair(UInt32(n), "uint")
        case is UInt64.Type: return pair(UInt64(n), "uint")
        case is Double.Type: return pair(Double(n), "double")
        case is Float.Type: return pair(Float(n), "float")
        case is Decimal.Type: return pair(Decimal(n), "decimal")
        case is Date.Type: return pair(Date(timeIntervalSinceReferenceDate: Double(n)), "date")
        case is UUID.Type:
            return pair(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(n))), "uuid")
        case is URL.Type: return pair(URL(string: varied ? "https://example.com/0" : "https://example.com")!, "url")
        case is Data.Type: return pair(Data(repeating: 0, count: n), "data")
        default: return nil
        }
    }

    /// Decodes a value of `type` into `node`: a scalar's placeholder, a `CaseIterable` enum's
    /// first case (its kind that of its raw value), or the type's own `init(from:)`.
    static func decode<T: Decodable>(_ type: T.Type, into node: Node, path: [String]) throws -> T {
        // A required value far past the limit: a type whose recursion no array or optional ends.
        guard path.count <= 2 * depthLimit else {
            throw DecodingError.dataCorrupted(
                DecodingError.Context(codingPath: [], debugDescription: "the probe reads \(depthLimit) levels deep"))
        }
        let isVaried = varied.map { path.starts(with: $0) } ?? false
        if let (value, kind) = placeholder(type, varied: isVaried) {
            node.kind = .scalar(kind)
            return value
        }
        if let cases = type as? any CaseIterable.Type, let first = firstCase(of: cases, second: isVaried) as? T {
            // The raw value's kind, learned by decoding the enum as its own init(from:) would.
            let probe = Node()
            _ = try? T(from: ProbeDecoder(node: probe, path: path))
            node.kind = probe.kind
            return first
        }
        return try T(from: ProbeDecoder(node: node, path: path))
    }

    /// The first case, or the second (when there is one) when `second`.
    private static func firstCase<C: CaseIterable>(of type: C.Type, second: Bool) -> Any? {
        second ? (C.allCases.dropFirst().first ?? C.allCases.first) : C.allCases.first
    }

    struct ProbeDecoder: Decoder {
        let node: Node
        let path: [String]
        var codingPath: [any CodingKey] { path.map { AnyKey(stringValue: $0) } }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
            if case .unknown = node.kind { node.kind = .keyed([]) }
            return KeyedDecodingContainer(KeyedProbe<Key>(node: node, path: path))
        }

        func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
            let element: Node
            if case .array(let existing) = node.kind {
                element = existing
            } else {
                element = Node()
                node.kind = .array(element)
            }
            return UnkeyedProbe(element: element, path: path)
        }

        func singleValueContainer() throws -> any SingleValueDecodingContainer {
            SingleProbe(node: node, path: path)
        }
    }

    struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    struct KeyedProbe<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let node: Node
        let path: [String]
        var codingPath: [any CodingKey] { path.map { AnyKey(stringValue: $0) } }

        /// Asking for the keys means a dictionary: its fields are not known beforehand.
        var allKeys: [Key] {
            node.kind = .dynamic
            return []
        }

        func contains(_ key: Key) -> Bool { true }

        func decodeNil(forKey key: Key) throws -> Bool {
            node.child(key.stringValue).isOptional = true
            return path.count >= ModelSchemaProbe.depthLimit
        }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            try ModelSchemaProbe.decode(type, into: node.child(key.stringValue), path: path + [key.stringValue])
        }

        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
            let child = node.child(key.stringValue)
            child.isOptional = true
            guard path.count < ModelSchemaProbe.depthLimit else { return nil }
            return try ModelSchemaProbe.decode(type, into: child, path: path + [key.stringValue])
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try ProbeDecoder(node: node.child(key.stringValue), path: path + [key.stringValue])
                .container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try ProbeDecoder(node: node.child(key.stringValue), path: path + [key.stringValue]).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder { ProbeDecoder(node: node.child("super"), path: path + ["super"]) }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            ProbeDecoder(node: node.child(key.stringValue), path: path + [key.stringValue])
        }
    }

    /// An array of one element: enough to learn the element's shape.
    struct UnkeyedProbe: UnkeyedDecodingContainer {
        let element: Node
        let path: [String]
        var currentIndex = 0
        var codingPath: [any CodingKey] { path.map { AnyKey(stringValue: $0) } }
        var count: Int? { path.count >= ModelSchemaProbe.depthLimit ? 0 : 1 }
        var isAtEnd: Bool { currentIndex >= 1 || path.count >= ModelSchemaProbe.depthLimit }

        mutating func decodeNil() throws -> Bool {
            element.isOptional = true
            return path.count >= ModelSchemaProbe.depthLimit
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            defer { currentIndex += 1 }
            return try ModelSchemaProbe.decode(type, into: element, path: path + ["[]"])
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type
        ) throws -> KeyedDecodingContainer<NestedKey> {
            defer { currentIndex += 1 }
            return try ProbeDecoder(node: element, path: path + ["[]"]).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            defer { currentIndex += 1 }
            return try ProbeDecoder(node: element, path: path + ["[]"]).unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder { ProbeDecoder(node: element, path: path + ["[]"]) }
    }

    struct SingleProbe: SingleValueDecodingContainer {
        let node: Node
        let path: [String]
        var codingPath: [any CodingKey] { path.map { AnyKey(stringValue: $0) } }

        func decodeNil() -> Bool {
            node.isOptional = true
            return path.count >= ModelSchemaProbe.depthLimit
        }

        func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try ModelSchemaProbe.decode(type, into: node, path: path)
        }
    }
}
