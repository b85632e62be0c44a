import Foundation

extension RecordShape {
    /// A value of a stored record whose kind is not the one declared for its field.
    package struct KindMismatch: Sendable, Equatable {
        /// The field's dotted path (`name`, `address.city`, `tags[]` for an array's elements).
        package var field: String
        /// The declared kind and the value's, in the words of `rill schema` (`int`, `[string]`, `a nested struct`).
        package var declared: String
        package var found: String
    }

    /// The values of `record` whose kinds are not the ones this shape declares for their fields: what an
    /// entity's declared field kinds (an import's description) say its records may not hold, since writes given
    /// as JSON store those fields as the declared kinds.
    ///
    /// A field the shape does not name, one declared `any`, and an absent or null value match: a description
    /// makes no field required. An integer matches `int` and `uint` when the other kind holds it, as a model
    /// reads it. Of an array, only its first mismatching element is given.
    package func kindMismatches(in record: RecordValue) -> [KindMismatch] {
        var found: [KindMismatch] = []
        collectMismatches(of: record, path: "", into: &found)
        return found
    }

    private func collectMismatches(of value: RecordValue, path: String, into found: inout [KindMismatch]) {
        switch (self, value) {
        case (.any, _), (.mixed, _), (_, .null):
            return
        case (.array(let element), .array(let values)):
            for item in values {
                let before = found.count
                element.collectMismatches(of: item, path: path + "[]", into: &found)
                if found.count > before { return }
            }
        case (.cycle(let shapes), .array(let values)):
            for (offset, item) in values.enumerated() {
                let before = found.count
                shapes[offset % shapes.count].collectMismatches(of: item, path: path + "[]", into: &found)
                if found.count > before { return }
            }
        case (.map(let fields), .map(let values)):
            for field in fields {
                guard let value = values.first(where: { $0.name == field.name })?.value else { continue }
                let inner = path.isEmpty ? field.name : path + "." + field.name
                field.shape.collectMismatches(of: value, path: inner, into: &found)
            }
        case (.scalar(let example), _) where Self.holds(value, kindOf: example):
            return
        default:
            found.append(
                KindMismatch(
                    field: path.isEmpty ? "(the record)" : path, declared: EntitySchema.describe(jsonValue),
                    found: EntitySchema.describe(RecordShape(value).jsonValue)))
        }
    }

    /// Whether `value` is of the kind of `example`, or an integer that kind holds.
    private static func holds(_ value: RecordValue, kindOf example: RecordValue) -> Bool {
        switch (example, value) {
        case (.int, .uint(let number)): return number <= UInt64(Int64.max)
        case (.uint, .int(let number)): return number >= 0
        case (.bool, .bool), (.int, .int), (.uint, .uint), (.float, .float), (.double, .double), (.string, .string),
            (.data, .data), (.date, .date), (.uuid, .uuid), (.url, .url), (.decimal, .decimal):
            return true
        default: return false
        }
    }
}
