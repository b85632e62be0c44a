import Foundation

extension EntitySchema {
    /// The fields this schema reads as another kind than `stored` records them, by dotted path,
    /// with the two kinds in words (`string`, `[int]`, `a nested struct`). A field only one of
    /// them has is no kind change (it was added or removed); a renamed field is compared with its
    /// earlier name; `any` matches every kind.
    package func kindChanges(from stored: EntitySchema) -> [(field: String, stored: String, model: String)] {
        guard case .map(let fields) = kinds, case .map(let storedFields) = stored.kinds else { return [] }
        var changes: [(field: String, stored: String, model: String)] = []
        for field in fields {
            let earlier =
                storedFields.first { $0.name == field.name }
                ?? renamed[FieldPath.text(of: [field.name])].flatMap { old in storedFields.first { $0.name == old } }
            guard let earlier else { continue }
            Self.compare(earlier.value, field.value, path: field.name, into: &changes)
        }
        return changes
    }

    private static func compare(
        _ stored: RecordValue, _ model: RecordValue, path: String,
        into changes: inout [(field: String, stored: String, model: String)]
    ) {
        switch (stored, model) {
        case (.string("any"), _), (_, .string("any")): return
        case (.string(let old), .string(let new)):
            if old != new { changes.append((path, old, new)) }
        case (.array(let old), .array(let new)):
            guard let oldElement = old.first, let newElement = new.first else { return }
            compare(oldElement, newElement, path: path + "[]", into: &changes)
        case (.map(let old), .map(let new)):
            for field in new {
                guard let earlier = old.first(where: { $0.name == field.name }) else { continue }
                compare(earlier.value, field.value, path: path + "." + field.name, into: &changes)
            }
        default:
            changes.append((path, describe(stored), describe(model)))
        }
    }

    /// A kind in words, for messages.
    package static func describe(_ kind: RecordValue) -> String {
        switch kind {
        case .string(let name): name
        case .array(let elements):
            "[" + (elements.isEmpty ? "any" : elements.map(describe).joined(separator: ", ")) + "]"
        case .map: "a nested struct"
        default: "\(kind)"
        }
    }
}
