import Foundation
import RillLocks

/// Which stored field a key path of a `Codable` type reads, when its `CodingKeys` store a property
/// under another name (`case fullName = "full_name"`), or its own `init(from:)` reads it from
/// elsewhere.
///
/// A key path's description names the properties it reads (`\Person.fullName`); the record holds
/// the coding keys. A value of the type is made of placeholders (`ModelSchemaProbe`), and again
/// with the other placeholder in one field: the key path reads that field when its value changes
/// with it and equals what the field then stores. The described path is tried first (a type with
/// synthesized keys costs one probe a key path), then every field. The described path stands when
/// the probe cannot tell: a type that refuses the placeholders, a path into a value stored as one
/// value (a reference's `id`), a dictionary, a value that is not stored (`Related`). When no field
/// or more than one qualifies, the key path is not a stored field and is evaluated on the models
/// (a property computed in `init(from:)`, a field left out of the coding keys).
enum StoredFieldProbe {
    /// The stored field path `keyPath` of `root` reads, described as `described` (nil: none).
    static func fieldPath(of keyPath: AnyKeyPath, described: [String], root: Any.Type) -> [String]? {
        guard let codable = root as? any Codable.Type else { return described }
        return fieldPath(of: keyPath, described: described, in: codable)
    }

    private static func fieldPath<T: Codable>(
        of keyPath: AnyKeyPath, described: [String], in type: T.Type
    ) -> [String]? {
        let probe = Probe.of(type)
        guard let kinds = probe.kinds, let base = probe.base, let read = base[keyPath: keyPath],
            !(read is any RelationshipValue) || read is any AnyModelReference,
            let baseValue = ProbeRecords.recordValue(read)
        else { return described }
        switch field(described, in: kinds) {
        case .insideOneValue, .dynamic: return described
        case .field: if probe.reads(keyPath, field: described, from: baseValue) { return described }
        case .missing: break
        }
        let reading = probe.fields.filter { $0 != described && probe.reads(keyPath, field: $0, from: baseValue) }
        return reading.count == 1 ? reading[0] : nil
    }

    /// What the schema `kinds` (`ModelSchemaProbe.Schema.kinds`) has at `path`.
    private enum Field { case field, missing, insideOneValue, dynamic }

    private static func field(_ path: [String], in kinds: RecordValue) -> Field {
        var current = kinds
        for name in path {
            guard case .map(let fields) = current else { return current == .string("any") ? .dynamic : .insideOneValue }
            guard let next = fields.value(named: name) else { return .missing }
            current = next
        }
        return current == .string("any") ? .dynamic : .field
    }

    /// What is known of a type: its schema's kinds and its placeholder value (nil when it
    /// refuses the placeholders), and, made when first asked, its values with one field varied.
    private final class Probe: @unchecked Sendable {
        let kinds: RecordValue?
        let base: Any?
        /// The paths of the fields the schema has, through nested maps.
        let fields: [[String]]
        private let varying: (_ field: [String]) -> (value: Any, record: RecordValue)?
        /// The varied values made so far, by field. `@unchecked Sendable`: the rest never
        /// changes once made, and this only under its lock.
        private let varied = Lock<[[String]: (value: Any, record: RecordValue)?]>([:])

        private init<T: Codable>(_ type: T.Type) {
            kinds = ModelSchemaProbe.schema(of: T.self)?.kinds
            base = ModelSchemaProbe.value(of: T.self)
            var fields: [[String]] = []
            if let kinds { Self.collectFields(kinds, path: [], into: &fields) }
            self.fields = fields
            varying = { field in
                guard let value = ModelSchemaProbe.value(of: T.self, varying: field),
                    let bytes = try? RecordCoder.encode(value),
                    let record = try? bytes.withUnsafeBytes({ try RecordValue(record: $0) })
                else { return nil }
                return (value, record)
            }
        }

        static func of<T: Codable>(_ type: T.Type) -> Probe {
            let key = ObjectIdentifier(type)
            if let known = cache.withLock({ $0[key] }) { return known }
            let probe = Probe(type)
            cache.withLock { cache in
                if cache.count < 1_024 { cache[key] = probe }
            }
            return probe
        }

        private static let cache = Lock<[ObjectIdentifier: Probe]>([:])

        /// Whether `keyPath` reads `field`: its value, `baseValue` in the placeholder value,
        /// changes when the field's placeholders do, to what the field then stores.
        func reads(_ keyPath: AnyKeyPath, field: [String], from baseValue: RecordValue) -> Bool {
            guard let (value, record) = variedValue(field), let read = value[keyPath: keyPath],
                let readValue = ProbeRecords.recordValue(read), readValue != baseValue
            else { return false }
            var stored: RecordValue? = record
            for name in field {
                guard case .map(let entries) = stored else { return false }
                stored = entries.value(named: name)
            }
            return stored == readValue
        }

        private func variedValue(_ field: [String]) -> (value: Any, record: RecordValue)? {
            if let known = varied.withLock({ $0[field] }) { return known }
            let made = varying(field)
            varied.withLock { $0[field] = .some(made) }
            return made
        }

        private static func collectFields(_ kinds: RecordValue, path: [String], into fields: inout [[String]]) {
            guard case .map(let entries) = kinds else { return }
            for entry in entries {
                fields.append(path + [entry.name])
                collectFields(entry.value, path: path + [entry.name], into: &fields)
            }
        }
    }
}

/// What the probes of `StoredFieldProbe` and `FamilyProbe` compare: values as records hold them.
enum ProbeRecords {
    /// A value read through a key path as a record holds it.
    static func recordValue(_ value: Any) -> RecordValue? {
        if let literal = PredicateValues.literal(value) { return literal }
        guard let encodable = value as? any Encodable, let bytes = try? RecordCoder.encode(encodable) else {
            return nil
        }
        return try? bytes.withUnsafeBytes { try RecordValue(record: $0) }
    }

    /// The paths of the fields of `record` (through nested maps, not arrays) that hold `value`.
    static func collect(_ value: RecordValue, in record: RecordValue, path: [String], into paths: inout [[String]]) {
        guard case .map(let fields) = record else { return }
        for field in fields {
            if field.value == value { paths.append(path + [field.name]) }
            collect(value, in: field.value, path: path + [field.name], into: &paths)
        }
    }
}
