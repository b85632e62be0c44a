import Rill

/// A query of the store-operations target, chosen by the input: its text, and the same query
/// evaluated by brute force over plain `FuzzItem`s.
struct FuzzQuery {
    /// A predicate's text and its evaluation.
    struct Condition {
        var text: String
        var holds: (FuzzItem) -> Bool
    }

    static let names = ["", "alpha", "ALPHA", "Beta", "beta", "b", "gamma", "Gamma ray"]

    var text: String
    var condition: Condition?
    /// Sort keys: a field (`score`, `name` or `id`, which comes last) and whether ascending.
    var sort: [(field: String, ascending: Bool)]
    var limit: Int?
    var offset: Int?

    init(_ input: inout FuzzInput) {
        condition = input.int(in: 0...3) == 0 ? nil : Self.condition(&input, depth: 0)
        sort = []
        if input.bool() { sort.append(("score", input.bool())) }
        if input.bool() { sort.append(("name", input.bool())) }
        sort.append(("id", input.bool()))
        limit = input.bool() ? input.int(in: 0...12) : nil
        offset = input.bool() ? input.int(in: 0...6) : nil
        text = "FuzzItem"
        if let condition { text += " where " + condition.text }
        text += " sort by " + sort.map { $0.field + ($0.ascending ? " asc" : " desc") }.joined(separator: ", ")
        if let limit { text += " limit \(limit)" }
        if let offset { text += " offset \(offset)" }
    }

    static func condition(_ input: inout FuzzInput, depth: Int) -> Condition {
        switch input.int(in: 0...(depth < 3 ? 9 : 6)) {
        case 0:
            let n = input.int(in: -9...9)
            return Condition(text: "score > \(n)") { $0.score > n }
        case 1:
            let n = input.int(in: -9...9)
            return Condition(text: "score <= \(n)") { $0.score <= n }
        case 2:
            let g = input.int(in: 0...4)
            return Condition(text: "group == \(g)") { $0.group == g }
        case 3:
            let a = input.int(in: 0...4)
            let b = input.int(in: 0...4)
            return Condition(text: "group in [\(a), \(b)]") { $0.group == a || $0.group == b }
        case 4:
            let lower = input.int(in: -9...9)
            let upper = input.int(in: -9...9)
            return Condition(text: "score between \(lower) and \(upper)") { lower <= $0.score && $0.score <= upper }
        case 5:
            let prefix = String(input.pick(names).prefix(input.int(in: 0...3)))
            return Condition(text: "name beginswith \"\(prefix)\"") { $0.name.hasPrefix(prefix) }
        case 6:
            let part = String(input.pick(names).suffix(input.int(in: 0...2)))
            // With an option, the test is Foundation's search, which finds an empty pattern nowhere.
            return Condition(text: "name contains[c] \"\(part)\"") {
                !part.isEmpty && $0.name.lowercased().contains(part.lowercased())
            }
        case 7:
            let inner = condition(&input, depth: depth + 1)
            return Condition(text: "not (\(inner.text))") { !inner.holds($0) }
        case 8:
            let a = condition(&input, depth: depth + 1)
            let b = condition(&input, depth: depth + 1)
            return Condition(text: "(\(a.text) and \(b.text))") { a.holds($0) && b.holds($0) }
        default:
            let a = condition(&input, depth: depth + 1)
            let b = condition(&input, depth: depth + 1)
            return Condition(text: "(\(a.text) or \(b.text))") { a.holds($0) || b.holds($0) }
        }
    }

    /// The identifiers of the results over `items`, in order.
    func evaluate(_ items: [FuzzItem]) -> [Int] {
        let matching = items.filter { condition?.holds($0) ?? true }
        let sorted = matching.sorted { a, b in
            for key in sort {
                let order: Bool? =
                    switch key.field {
                    case "score": a.score == b.score ? nil : (a.score < b.score) == key.ascending
                    case "name": a.name == b.name ? nil : (a.name < b.name) == key.ascending
                    default: a.id == b.id ? nil : (a.id < b.id) == key.ascending
                    }
                if let order { return order }
            }
            return false
        }
        let start = min(offset ?? 0, sorted.count)
        let end = limit.map { min(start + $0, sorted.count) } ?? sorted.count
        return sorted[start..<end].map(\.id)
    }
}
