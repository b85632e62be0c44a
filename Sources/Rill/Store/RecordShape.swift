import Foundation

/// What the records of an entity look like, learned from stored ones: each field's kind.
package indirect enum RecordShape: Sendable {
    /// Nothing known: any value goes.
    case any
    /// Values of several kinds were seen here (in stored records, or elements of one array that
    /// follow no cycle): any value goes, as with `any`, and later values do not narrow it.
    case mixed
    /// A scalar of the kind of this example value.
    case scalar(RecordValue)
    case array(RecordShape)
    /// An array whose elements take these shapes in turn (element `i` the shape `i % count`): what
    /// `Codable` stores for a dictionary whose keys are not strings or integers (key, value, key,
    /// value, …) and an unkeyed container of values of several kinds.
    case cycle([RecordShape])
    /// A struct or dictionary: known fields in stored order.
    case map([(name: String, shape: RecordShape)])

    /// The shape of up to 64 of `entity`'s stored records, merged: what a write checks against.
    package static func learn(from entity: EntityStorage, in store: Store) throws -> RecordShape {
        try store.read { snapshot in try learn(from: entity, in: snapshot, limit: 64) }
    }

    /// The shape of `entity`'s stored records in `snapshot`, merged: of the first `limit` of them, or of all of
    /// them (what an export describes, so that a field only later records have is described too).
    package static func learn(from entity: EntityStorage, in snapshot: StoreSnapshot, limit: Int?) throws -> RecordShape
    {
        var shape: RecordShape?
        let limit = limit ?? Int.max
        guard limit > 0 else { return .any }
        var count = 0
        try snapshot.forEachRecord(of: entity) { key, bytes in
            let value = try Store.recordValue(bytes, key: key, entity: entity.name)
            shape = shape.map { $0.union(with: RecordShape(value)) } ?? RecordShape(value)
            count += 1
            return count < limit
        }
        return shape ?? .any
    }

    init(_ value: RecordValue) {
        switch value {
        case .null: self = .any
        case .array(let elements):
            self = Self.elements(elements.map(RecordShape.init))
        case .map(let fields): self = .map(fields.map { ($0.name, RecordShape($0.value)) })
        default: self = .scalar(value)
        }
    }

    /// The shape with an `id` field of the identifier's kind when it names no `id` (a description
    /// need not list the identifier: every record has one).
    func withIdentifier(_ kind: IdentifierKind) -> RecordShape {
        guard case .map(let fields) = self, !fields.contains(where: { $0.name == "id" }) else { return self }
        let example: RecordValue =
            switch kind {
            case .integer: .int(0)
            case .string: .string("")
            case .uuid: .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
            }
        return .map([(name: "id", shape: .scalar(example))] + fields)
    }

    /// The shape of an array whose elements have `shapes`: one shape for all of them when they
    /// agree, else the shortest cycle of up to 16 shapes they follow, when the array shows it is
    /// one — the cycle comes round at least twice (a dictionary `Codable` stores as key, value,
    /// key, value…), or it holds a kind only Swift writes (a date, a UUID: a dictionary keyed by
    /// UUIDs, a struct's unkeyed container) — else mixed where they disagree. So an array of
    /// JSON values of several kinds (`[1, "a"]`) leaves the next record's array free.
    private static func elements(_ shapes: [RecordShape]) -> RecordShape {
        guard !shapes.isEmpty else { return .array(.any) }
        for period in 1...min(shapes.count, 16) {
            var cycle: [RecordShape] = []
            for (offset, shape) in shapes.enumerated() {
                if offset < period {
                    cycle.append(shape)
                } else if let merged = cycle[offset % period].mergedIfAgreeing(with: shape) {
                    cycle[offset % period] = merged
                } else {
                    cycle = []
                    break
                }
            }
            guard cycle.count == period else { continue }
            if period == 1 { return .array(cycle[0]) }
            // Longer cycles of the same elements come round less, and hold the same kinds.
            guard shapes.count >= 2 * period || cycle.contains(where: \.isSwiftOnlyScalar) else { break }
            return .cycle(cycle)
        }
        return .array(shapes.dropFirst().reduce(shapes[0]) { $0.union(with: $1) })
    }

    /// A scalar of a kind that no JSON value is (JSON writes store numbers, strings and booleans).
    private var isSwiftOnlyScalar: Bool {
        guard case .scalar(let example) = self else { return false }
        return ["float", "data", "date", "uuid", "url", "decimal"].contains(Self.kindName(example))
    }

    /// This shape merged with `other` when no scalar of one has another kind than the other's at
    /// the same place; nil when one does.
    private func mergedIfAgreeing(with other: RecordShape) -> RecordShape? {
        switch (self, other) {
        case (.any, _): return other
        case (_, .any): return self
        case (.scalar(let a), .scalar(let b)): return Self.kindName(a) == Self.kindName(b) ? self : nil
        case (.mixed, .mixed): return self
        case (.array(let a), .array(let b)): return a.mergedIfAgreeing(with: b).map(RecordShape.array)
        case (.map(let a), .map(let b)):
            return Self.fields(a, b) { $0.mergedIfAgreeing(with: $1) }.map(RecordShape.map)
        case (.cycle(let a), .cycle(let b)):
            let (long, short) = a.count >= b.count ? (a, b) : (b, a)
            guard long.count % short.count == 0 else { return nil }
            var merged: [RecordShape] = []
            for index in long.indices {
                guard let shape = a[index % a.count].mergedIfAgreeing(with: b[index % b.count]) else { return nil }
                merged.append(shape)
            }
            return .cycle(merged)
        case (.cycle(let shapes), .array(let element)), (.array(let element), .cycle(let shapes)):
            var merged: [RecordShape] = []
            for shape in shapes {
                guard let agreeing = shape.mergedIfAgreeing(with: element) else { return nil }
                merged.append(agreeing)
            }
            return .cycle(merged)
        default: return nil
        }
    }

    /// The shape of records that have this shape or `other`'s: where a scalar of one has another
    /// kind than the other's at the same place (or a scalar meets an array or an object), the
    /// place is `mixed`. What the stored records of an entity show, so that every one of them
    /// fits it (an export's description is imported with them).
    func union(with other: RecordShape) -> RecordShape {
        switch (self, other) {
        case (.any, _): return other
        case (_, .any): return self
        case (.mixed, _), (_, .mixed): return .mixed
        case (.scalar(let a), .scalar(let b)): return Self.kindName(a) == Self.kindName(b) ? self : .mixed
        case (.array, .array), (.array, .cycle), (.cycle, .array), (.cycle, .cycle):
            return Self.unitedElements(periodicShapes, other.periodicShapes)
        case (.map(let a), .map(let b)):
            return .map(Self.fields(a, b) { $0.union(with: $1) }!)
        default: return .mixed
        }
    }

    /// The shapes an array's elements take in turn: its elements' one shape, or a cycle's.
    private var periodicShapes: [RecordShape] {
        switch self {
        case .array(let element): [element]
        case .cycle(let shapes): shapes
        default: []
        }
    }

    /// The longest cycle a union makes; arrays of longer ones take any elements.
    private static let longestCycle = 64

    /// Arrays whose elements take the shapes `a` in turn, and those whose take `b`'s, as one: at
    /// each place of the two cycles' least common length the two shapes united, then written as
    /// the shortest cycle that repeats them (one shape: an array). The same whatever order the
    /// records are united in.
    private static func unitedElements(_ a: [RecordShape], _ b: [RecordShape]) -> RecordShape {
        func gcd(_ x: Int, _ y: Int) -> Int { y == 0 ? x : gcd(y, x % y) }
        guard !a.isEmpty, !b.isEmpty else { return .array(.mixed) }
        let length = a.count / gcd(a.count, b.count) * b.count
        guard length <= longestCycle else { return .array(.mixed) }
        let united = (0..<length).map { a[$0 % a.count].union(with: b[$0 % b.count]) }
        let signatures = united.map(\.signature)
        for period in 1..<length where length % period == 0 {
            if (period..<length).allSatisfy({ signatures[$0] == signatures[$0 % period] }) {
                return period == 1 ? .array(united[0]) : .cycle(Array(united.prefix(period)))
            }
        }
        return length == 1 ? .array(united[0]) : .cycle(united)
    }

    /// The shape in words, fields in name order: equal for shapes that take the same values.
    private var signature: String {
        switch self {
        case .any: "?"
        case .mixed: "*"
        case .scalar(let example): Self.kindName(example)
        case .array(let element): "[" + element.signature + "]"
        case .cycle(let shapes): "<" + shapes.map(\.signature).joined(separator: ",") + ">"
        case .map(let fields):
            "{" + fields.map { $0.name.debugDescription + ":" + $0.shape.signature }.sorted().joined(separator: ",")
                + "}"
        }
    }

    /// The fields of `a` and of `b`, those both have combined by `combine` (nil when it gives nil
    /// for one). A field only `b` has goes right after the field before it in `b` (first when
    /// none is): records that each hold some of one order of fields (an optional field left out
    /// where it is nil) give that order, as the model that wrote them does.
    private static func fields(
        _ a: [(name: String, shape: RecordShape)], _ b: [(name: String, shape: RecordShape)],
        _ combine: (RecordShape, RecordShape) -> RecordShape?
    ) -> [(name: String, shape: RecordShape)]? {
        var fields = a
        var previous: Int?
        for field in b {
            if let index = fields.firstIndex(where: { $0.name == field.name }) {
                guard let combined = combine(fields[index].shape, field.shape) else { return nil }
                fields[index].shape = combined
                previous = index
            } else {
                let index = previous.map { $0 + 1 } ?? 0
                fields.insert(field, at: index)
                previous = index
            }
        }
        return fields
    }

    /// This shape with `other`'s where this one knows nothing (`any`) and with the fields only
    /// `other` has: where both know a place, this one's kind stays (a description over what
    /// records show).
    func merged(with other: RecordShape) -> RecordShape {
        switch (self, other) {
        case (.any, _): return other
        case (_, .any): return self
        case (.array(let a), .array(let b)): return .array(a.merged(with: b))
        case (.cycle(let a), .cycle(let b)):
            // Cycles of records of one field: the longer's length, when it repeats the shorter.
            let (long, short) = a.count >= b.count ? (a, b) : (b, a)
            guard long.count % short.count == 0 else { return self }
            let merged = long.indices.map { a[$0 % a.count].merged(with: b[$0 % b.count]) }
            return .cycle(merged)
        case (.cycle(let a), .array(let b)): return .cycle(a.map { $0.merged(with: b) })
        case (.array(let a), .cycle(let b)): return .cycle(b.map { a.merged(with: $0) })
        case (.map(let a), .map(let b)):
            var fields = a
            for field in b {
                if let index = fields.firstIndex(where: { $0.name == field.name }) {
                    fields[index].shape = fields[index].shape.merged(with: field.shape)
                } else {
                    fields.append(field)
                }
            }
            return .map(fields)
        default: return self
        }
    }

    /// This shape with its top-level fields in the order of `other`'s, then its own others.
    func ordered(like other: RecordShape) -> RecordShape {
        guard case .map(let fields) = self, case .map(let order) = other else { return self }
        var sorted = order.compactMap { field in fields.first { $0.name == field.name } }
        sorted += fields.filter { field in !order.contains { $0.name == field.name } }
        return .map(sorted)
    }

    /// `value` in the stored kinds of this shape; top-level fields must be known ones.
    func conform(_ value: RecordValue, entity: String, dropNulls: Bool) throws -> RecordValue {
        try conform(value, path: [], entity: entity, dropNulls: dropNulls)
    }

    private func conform(_ value: RecordValue, path: [String], entity: String, dropNulls: Bool) throws -> RecordValue {
        func fail(_ expected: String) -> RillError {
            let field = path.isEmpty ? "the record" : "field \(path.joined(separator: "."))"
            return RillError(
                .invalidRecord, "\(field) of \(entity) must be \(expected); got \(value.jsonString())")
        }
        if value == .null { return .null }
        switch self {
        case .any, .mixed:
            return try Self.plain(value, fail: fail)
        case .array(let element):
            guard case .array(let elements) = value else { throw fail("an array") }
            return .array(
                try elements.enumerated().map {
                    try element.conform($1, path: path + ["\($0)"], entity: entity, dropNulls: dropNulls)
                })
        case .cycle(let shapes):
            guard case .array(let elements) = value else { throw fail("an array") }
            return .array(
                try elements.enumerated().map {
                    try shapes[$0 % shapes.count].conform(
                        $1, path: path + ["\($0)"], entity: entity, dropNulls: dropNulls)
                })
        case .map(let known):
            guard case .map(let fields) = value else { throw fail("an object") }
            var out: [RecordField] = []
            // Known fields in stored order, then the others (the keys of a dictionary).
            for field in known {
                guard let given = fields.first(where: { $0.name == field.name }) else { continue }
                let conformed = try field.shape.conform(
                    given.value, path: path + [field.name], entity: entity, dropNulls: dropNulls)
                if conformed == .null, dropNulls { continue }
                out.append(RecordField(name: field.name, value: conformed))
            }
            for field in fields where !known.contains(where: { $0.name == field.name }) {
                guard !path.isEmpty || known.isEmpty else {
                    throw RillError(
                        .invalidRecord,
                        "\(entity) has no field \"\(field.name)\" (it has: \(known.map(\.name).joined(separator: ", ")))"
                    )
                }
                if field.value == .null, dropNulls { continue }
                out.append(
                    RecordField(
                        name: field.name,
                        value: try RecordShape.any.conform(
                            field.value, path: path + [field.name], entity: entity, dropNulls: dropNulls)))
            }
            return .map(out)
        case .scalar(let example):
            return try Self.scalar(value, like: example, fail: fail)
        }
    }

    /// `value`, a scalar from JSON, as the stored kind of `example`. Conversions never lose a digit the stored kind
    /// could keep: a number's text goes straight to a Double or a Float (rounded once), to a Decimal only when the
    /// Decimal holds it exactly, and to a Date through exact arithmetic.
    private static func scalar(
        _ value: RecordValue, like example: RecordValue, fail: (String) -> RillError
    ) throws -> RecordValue {
        switch (example, value) {
        case (.bool, .bool), (.int, .int), (.string, .string): return value
        case (.int, _): throw fail("an integer")
        case (.uint, .int(let v)) where v >= 0: return .uint(UInt64(v))
        case (.uint, .uint): return value
        case (.uint, _): throw fail("a non-negative integer")
        case (.double, _):
            guard let double = Self.floatingPoint(Double.self, value) else { throw fail("a number") }
            return .double(double)
        case (.float, _):
            guard let float = Self.floatingPoint(Float.self, value) else { throw fail("a number") }
            return .float(float)
        case (.date, _):
            guard let date = Self.date(value) else {
                throw fail("an ISO-8601 date (or a number of seconds since 1970)")
            }
            return .date(date)
        case (.uuid, .string(let text)):
            guard let uuid = UUIDText.uuid(text) else { throw fail("a UUID") }
            return .uuid(uuid)
        case (.uuid, _): throw fail("a UUID")
        case (.data, .string(let text)):
            guard let data = Data(base64Encoded: text) else { throw fail("base64 data") }
            return .data(data)
        case (.data, _): throw fail("base64 data")
        case (.url, .string(let text)): return .url(text)
        case (.url, _): throw fail("a URL string")
        case (.decimal, _):
            guard let decimal = Self.decimal(value) else {
                throw fail("a decimal number that a Decimal holds exactly (at most 38 digits)")
            }
            return .decimal(decimal)
        case (.bool, _): throw fail("true or false")
        case (.string, _): throw fail("a string")
        default: return try plain(value, fail: fail)
        }
    }

    /// A value for a field of unknown kind: as JSON gave it, but with numbers that are not integers as Doubles
    /// (the reader keeps them as text until the kind is known).
    private static func plain(_ value: RecordValue, fail: (String) -> RillError) throws -> RecordValue {
        switch value {
        case .decimal:
            guard let double = floatingPoint(Double.self, value) else { throw fail("a number within a Double's range") }
            return .double(double)
        case .array(let elements):
            return .array(try elements.map { try plain($0, fail: fail) })
        case .map(let fields):
            return .map(try fields.map { RecordField(name: $0.name, value: try plain($0.value, fail: fail)) })
        default:
            return value
        }
    }

    /// A JSON number (or "NaN", "Infinity", "-Infinity", as the JSON writer gives non-finite values) as the
    /// nearest `F`, read from its text; nil for anything else, or a finite number beyond `F`'s range.
    private static func floatingPoint<F: BinaryFloatingPoint & LosslessStringConvertible>(
        _ type: F.Type, _ value: RecordValue
    ) -> F? {
        let text: String
        switch value {
        case .int(let v): text = String(v)
        case .uint(let v): text = String(v)
        case .decimal(let v): text = v
        case .string("NaN"): return F.nan
        case .string("Infinity"): return F.infinity
        case .string("-Infinity"): return -F.infinity
        default: return nil
        }
        guard let result = F(text), result.isFinite else { return nil }
        return result
    }

    /// A JSON number (or a string holding one, or "NaN") as the text of the Decimal that is exactly that number, as
    /// the record encoder writes it (its description); nil when a Decimal cannot hold it exactly.
    private static func decimal(_ value: RecordValue) -> String? {
        let text: String
        switch value {
        case .int(let v): text = String(v)
        case .uint(let v): text = String(v)
        case .decimal(let v), .string(let v): text = v
        default: return nil
        }
        if text == "NaN" { return text }
        guard let digits = DecimalDigits(text), let decimal = Decimal(string: text, locale: nil),
            DecimalDigits(decimal.description) == digits
        else { return nil }
        return decimal.description
    }

    /// An ISO-8601 string, a number of seconds since 1970, or a non-finite value as the JSON writer gives it.
    private static func date(_ value: RecordValue) -> Date? {
        let seconds: Double?
        switch value {
        case .string("NaN"): seconds = .nan
        case .string("Infinity"): seconds = .infinity
        case .string("-Infinity"): seconds = -.infinity
        case .string(let text): seconds = ISO8601Time.secondsSinceReferenceDate(parsing: text)
        case .int(let v):
            seconds = DecimalDigits(String(v)).flatMap(ISO8601Time.secondsSinceReferenceDate(secondsSince1970:))
        case .uint(let v):
            seconds = DecimalDigits(String(v)).flatMap(ISO8601Time.secondsSinceReferenceDate(secondsSince1970:))
        case .decimal(let v):
            seconds = DecimalDigits(v).flatMap(ISO8601Time.secondsSinceReferenceDate(secondsSince1970:))
        default: seconds = nil
        }
        return seconds.map { Date(timeIntervalSinceReferenceDate: $0) }
    }
}

extension RecordShape {
    /// The shape as JSON, for an export: each field's kind by name (`"int"`, `"double"`,
    /// `"string"`, `"date"`, `"uuid"`, `"data"`, `"url"`, `"decimal"`, `"bool"`, `"uint"`,
    /// `"float"`, `"any"`), an array as `[kind]` (`[kind, kind, …]` for one whose elements take
    /// the kinds in turn), a struct as an object.
    package var jsonValue: RecordValue {
        switch self {
        case .any, .mixed: .string("any")
        case .array(let element): .array([element.jsonValue])
        case .cycle(let shapes): .array(shapes.map(\.jsonValue))
        case .map(let fields): .map(fields.map { RecordField(name: $0.name, value: $0.shape.jsonValue) })
        case .scalar(let example): .string(Self.kindName(example))
        }
    }

    private static func kindName(_ example: RecordValue) -> String {
        switch example {
        case .bool: "bool"
        case .int: "int"
        case .uint: "uint"
        case .float: "float"
        case .double: "double"
        case .string: "string"
        case .data: "data"
        case .date: "date"
        case .uuid: "uuid"
        case .url: "url"
        case .decimal: "decimal"
        default: "any"
        }
    }

    /// The shape of `jsonValue`; nil for something else.
    package init?(json: RecordValue) {
        guard let shape = try? Self.parse(json, path: "") else { return nil }
        self = shape
    }

    /// The field kinds an entity description gives (an import's `"fields"`): an object of field name to kind, in
    /// `jsonValue`'s form, or with an array's kind written as `rill schema` prints it (`"[string]"` as well as
    /// `["string"]`).
    ///
    /// - Throws: `InvalidKind` naming the first field whose kind is not one, or with an empty path when `json` is
    ///   not an object.
    package static func described(by json: RecordValue) throws(InvalidKind) -> RecordShape {
        guard case .map = json else { throw InvalidKind(path: "", value: json) }
        return try parse(json, path: "")
    }

    /// A field whose kind, in a description, is none of the kinds: its dotted path (`tags[]` for an array's
    /// elements) and what was given.
    package struct InvalidKind: Error, Sendable {
        package var path: String
        package var value: RecordValue
    }

    private static let examples: [String: RecordValue] = [
        "bool": .bool(false), "int": .int(0), "uint": .uint(0), "float": .float(0), "double": .double(0),
        "string": .string(""), "data": .data(Data()), "date": .date(Date(timeIntervalSince1970: 0)),
        "uuid": .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))), "url": .url(""),
        "decimal": .decimal("0"),
    ]

    private static func parse(_ json: RecordValue, path: String) throws(InvalidKind) -> RecordShape {
        switch json {
        case .string("any"):
            return .any
        case .string(let kind):
            if let example = examples[kind] { return .scalar(example) }
            // An array's kind as `rill schema` prints it: the field is named with what it was given.
            if kind.count > 2, kind.hasPrefix("["), kind.hasSuffix("]") {
                do {
                    return .array(try parse(.string(String(kind.dropFirst().dropLast())), path: path + "[]"))
                } catch {
                    throw InvalidKind(path: path, value: json)
                }
            }
            throw InvalidKind(path: path, value: json)
        case .array(let elements):
            guard !elements.isEmpty else { throw InvalidKind(path: path, value: json) }
            let shapes = try elements.map { element throws(InvalidKind) in try parse(element, path: path + "[]") }
            return shapes.count == 1 ? .array(shapes[0]) : .cycle(shapes)
        case .map(let fields):
            var shapes: [(name: String, shape: RecordShape)] = []
            for field in fields {
                shapes.append(
                    (field.name, try parse(field.value, path: path.isEmpty ? field.name : "\(path).\(field.name)")))
            }
            return .map(shapes)
        default:
            throw InvalidKind(path: path, value: json)
        }
    }
}
