import Foundation

extension QueryNode {
    /// The first component of every field path the node reads; nil when it reads the whole record.
    var topLevelFields: Set<String>? {
        var fields: Set<String> = []
        var readsAll = false
        func visit(_ node: QueryNode) {
            switch node {
            case .field(let path):
                if let first = path.first { fields.insert(first) } else { readsAll = true }
            case .element, .literal: break
            case .compare(_, let lhs, let rhs), .string(_, let lhs, let rhs, _), .arithmetic(_, let lhs, let rhs),
                .coalesce(let lhs, let rhs):
                visit(lhs)
                visit(rhs)
            case .and(let operands), .or(let operands): operands.forEach(visit)
            case .not(let operand), .count(let operand), .negate(let operand): visit(operand)
            case .isIn(let value, let candidates):
                visit(value)
                candidates.forEach(visit)
            case .between(let value, let lower, let upper):
                visit(value)
                visit(lower)
                visit(upper)
            case .any(let collection, let body), .all(let collection, let body):
                visit(collection)
                visit(body)
            case .conditional(let condition, let then, let otherwise):
                visit(condition)
                visit(then)
                visit(otherwise)
            }
        }
        visit(self)
        return readsAll ? nil : fields
    }
}
