import Foundation

/// Checks a text query against what its entity's records hold (a `RecordShape`), so that a
/// mistyped field or a constant of the wrong kind is an error rather than an empty answer.
///
/// It finds:
/// - **unknown fields**: a path (in the predicate or a sort key, nested or read from a
///   quantifier's element) naming a field the shape does not have, or reading a field of a
///   scalar (`title.length`); the message suggests the closest field name;
/// - **kind mismatches**, where the query can never be true as written: a path compared (`==`,
///   `<`, `in`, `between`, …) with a constant of a kind it never compares with (a number field
///   with `"100"`, a Bool field with `"false"`, an array field with a string: use `any`); a string
///   test on a field that is not a string, or with a pattern that is not one; `any`/`all` over a
///   field that is not an array; arithmetic on a field that is not a number; `count` of a field
///   that has nothing to count.
///
/// What it does not judge: a part of the shape that is `.any` (nothing is known there: an entity
/// with no records, a field that was null in every record seen, the elements of arrays that were
/// always empty), an object with no known fields (a dictionary, perhaps), comparisons with `nil`
/// (every field may be nil), and comparisons between two fields or two expressions.
///
/// The shape is a sample (see `RecordShape.learn`), so each problem comes with the evidence that
/// would disprove it; `Store.check` looks for that evidence in every record before reporting.
package struct QueryValidator {
    private let entity: String
    /// The related records a rewritten predicate reads, by the name they are read under
    /// (`QueryRelationships.relatedName(_:)`): what messages call them, and the path written.
    private let related: [String: Related]
    /// The paths written in the query's text (none for a query built in code).
    private let writtenPaths: [QuerySource.Path]
    private let root: Scope
    private var problems: [QueryProblem] = []
    /// How many written paths were visited: the index of the next one in `writtenPaths`.
    private var visited = 0

    /// The records of another entity a path reads through a relationship.
    package struct Related: Sendable {
        /// The relationship field, as the query writes it.
        package var field: String
        /// The related entity.
        package var entity: String

        package init(field: String, entity: String) {
            self.field = field
            self.entity = entity
        }
    }

    private init(entity: String, source: QuerySource?, shape: RecordShape, related: [String: Related]) {
        self.entity = entity
        self.related = related
        writtenPaths = source?.paths ?? []
        root = Scope(shape: shape, chain: [], collection: nil, column: nil)
    }

    /// The problems of `query` given that its entity's records look like `shape`, in the order
    /// of the query text.
    ///
    /// - Parameter related: for a predicate rewritten to read related records
    ///   (`QueryRelationships`), the names they are read under; `shape` then has them, with the
    ///   related entity's shape.
    package static func problems(
        in query: Query, shape: RecordShape, related: [String: Related] = [:]
    ) -> [QueryProblem] {
        var validator = QueryValidator(entity: query.entity, source: query.source, shape: shape, related: related)
        if let predicate = query.predicate { validator.condition(predicate, in: validator.root) }
        for key in query.sort { _ = validator.resolve(key.path, isElement: false, in: validator.root) }
        return validator.problems
    }

    // MARK: - Walking the query
    //
    // Children are visited in the order they are written, so that the n-th path visited is the
    // n-th path of `QuerySource`.

    /// Where paths are read from: the record, or a quantifier's element.
    private struct Scope {
        var shape: RecordShape
        /// The paths from the record to here (`QueryProblem.Evidence.chain`).
        var chain: [[String]]
        /// For an element: how messages name its collection ("Book.items"); nil for the record.
        var collection: String?
        /// For an element: the column of its collection's path.
        var column: Int?
    }

    /// A path, resolved: what it holds, how messages name it (`name(_:)`), where it is.
    ///
    /// An object: an optional struct of these fields was copied and destroyed through the
    /// runtime's value witnesses, several times for every comparison checked.
    private final class Operand {
        var shape: RecordShape
        /// The collection of the scope the path is read in: with the validator's entity, what
        /// `name(_:)` is made of, only when a message needs it (most queries have no problem to
        /// report).
        let collection: String?
        let column: Int?
        let chain: [[String]]
        let path: [String]

        init(shape: RecordShape, collection: String?, column: Int?, chain: [[String]], path: [String]) {
            self.shape = shape
            self.collection = collection
            self.column = column
            self.chain = chain
            self.path = path
        }

        var kind: Kind? { Kind(shape) }

        func evidence(_ test: QueryProblem.Test) -> QueryProblem.Evidence {
            QueryProblem.Evidence(chain: chain, path: path, test: test)
        }
    }

    private mutating func condition(_ node: QueryNode, in scope: Scope) {
        switch node {
        case .compare(_, let lhs, let rhs):
            // A field compared with nil may be an optional that was nil in every record (and so
            // stored in none): that no record has it proves nothing.
            let left = value(lhs, in: scope, absenceIsAnError: !Self.isNil(rhs))
            let right = value(rhs, in: scope, absenceIsAnError: !Self.isNil(lhs))
            if let left, case .literal(let constant) = rhs { compare(left, with: constant) }
            if let right, case .literal(let constant) = lhs { compare(right, with: constant) }
        case .and(let operands), .or(let operands):
            for operand in operands { condition(operand, in: scope) }
        case .not(let operand):
            condition(operand, in: scope)
        case .string(let test, let lhs, let rhs, _):
            let subject = value(lhs, in: scope)
            let pattern = value(rhs, in: scope)
            for operand in [subject, pattern].compactMap({ $0 }) {
                guard let kind = operand.kind, kind != .string else { continue }
                report(
                    .kindMismatch, "\(test.rawValue) tests strings, and \(name(operand)) is \(kind.name)",
                    column: operand.column, evidence: operand.evidence(.isString))
            }
            for side in [lhs, rhs] {
                guard case .literal(let constant) = side else { continue }
                if case .string = constant { continue }
                report(
                    .kindMismatch,
                    "\(test.rawValue) tests strings, and \(QueryNode.literalText(constant)) is "
                        + (Kind(constant)?.name ?? "not one"),
                    column: subject?.column ?? pattern?.column, evidence: nil)
            }
        case .isIn(let operand, let candidates):
            let subject = value(operand, in: scope, absenceIsAnError: !candidates.contains(where: Self.isNil))
            for candidate in candidates {
                _ = value(candidate, in: scope)
                if let subject, case .literal(let constant) = candidate { compare(subject, with: constant) }
            }
        case .between(let operand, let lower, let upper):
            let subject = value(operand, in: scope)
            for bound in [lower, upper] {
                _ = value(bound, in: scope)
                if let subject, case .literal(let constant) = bound { compare(subject, with: constant) }
            }
        case .any(let collection, let body), .all(let collection, let body):
            let word = if case .any = node { "any" } else { "all" }
            condition(body, in: elementScope(of: collection, word: word, in: scope))
        case .literal:
            break
        case .field, .element, .count, .arithmetic, .negate, .coalesce, .conditional:
            _ = value(node, in: scope)
        }
    }

    /// Whether `node` is the constant nil. (A pattern, not `== .literal(.null)`: that builds a
    /// node, an allocation, for every comparison of every query.)
    private static func isNil(_ node: QueryNode) -> Bool {
        if case .literal(.null) = node { return true }
        return false
    }

    /// Visits a value; the operand when it is a path. `absenceIsAnError`: whether a path naming
    /// a field the records do not have is reported.
    private mutating func value(_ node: QueryNode, in scope: Scope, absenceIsAnError: Bool = true) -> Operand? {
        switch node {
        case .field(let path):
            return resolve(path, isElement: false, in: root, absenceIsAnError: absenceIsAnError)
        case .element(let path):
            return resolve(path, isElement: true, in: scope, absenceIsAnError: absenceIsAnError)
        case .literal:
            return nil
        case .count(let operand):
            if let counted = value(operand, in: scope), let kind = counted.kind,
                ![.array, .string, .object, .data].contains(kind)
            {
                report(
                    .kindMismatch,
                    "count counts an array's elements or a string's characters, and "
                        + "\(name(counted)) is \(kind.name)",
                    column: counted.column, evidence: counted.evidence(.isCountable))
            }
            return nil
        case .arithmetic(_, let lhs, let rhs):
            for side in [lhs, rhs] { number(value(side, in: scope)) }
            return nil
        case .negate(let operand):
            number(value(operand, in: scope))
            return nil
        case .coalesce(let operand, let fallback):
            _ = value(operand, in: scope)
            _ = value(fallback, in: scope)
            return nil
        case .conditional(let test, let then, let otherwise):
            condition(test, in: scope)
            _ = value(then, in: scope)
            _ = value(otherwise, in: scope)
            return nil
        case .compare, .and, .or, .not, .string, .isIn, .between, .any, .all:
            condition(node, in: scope)
            return nil
        }
    }

    /// The scope of a quantifier's body: the elements of its collection.
    private mutating func elementScope(of collection: QueryNode, word: String, in scope: Scope) -> Scope {
        guard let subject = value(collection, in: scope) else {
            return Scope(shape: .any, chain: [], collection: nil, column: nil)
        }
        var element = Scope(
            shape: .any, chain: subject.chain + [subject.path], collection: name(subject), column: subject.column)
        switch subject.shape {
        case .array(let shape):
            element.shape = shape
        case .any, .mixed, .cycle:
            // Elements of several kinds in turn: nothing is known of any one of them.
            break
        case .scalar, .map:
            report(
                .kindMismatch,
                "\(word) reads the elements of an array, and \(name(subject)) is \(subject.kind?.name ?? "not one")",
                column: subject.column, evidence: subject.evidence(.isArray))
        }
        return element
    }

    /// Reports an operand of arithmetic that is not a number.
    private mutating func number(_ operand: Operand?) {
        guard let operand, let kind = operand.kind, kind != .number else { return }
        report(
            .kindMismatch, "arithmetic needs numbers, and \(name(operand)) is \(kind.name)",
            column: operand.column, evidence: operand.evidence(.isNumber))
    }

    /// Reports a path compared with a constant it never compares with.
    private mutating func compare(_ operand: Operand, with constant: RecordValue) {
        guard constant != .null, let kind = operand.kind, !kind.compares(with: constant) else { return }
        let text = QueryNode.literalText(constant)
        report(
            .kindMismatch,
            "\(name(operand)) is \(kind.name), and \(text) is \(Kind(constant)?.name ?? "nil"): they never compare"
                + Self.hint(kind, constant),
            column: operand.column, evidence: operand.evidence(.comparesWith(constant)))
    }

    private static func hint(_ kind: Kind, _ constant: RecordValue) -> String {
        switch (kind, constant) {
        case (.number, .string(let text)) where Double(text) != nil:
            return " (write \(text) without quotes)"
        case (.bool, .string(let text)) where ["true", "false"].contains(text.lowercased()):
            return " (write \(text.lowercased()) without quotes)"
        case (.date, .string):
            return " (write dates without quotes: 2024-05-01, 2024-05-01T10:30:00Z)"
        case (.uuid, .string):
            return " (it is not a UUID)"
        case (.string, .int), (.string, .double), (.string, .bool):
            return " (write \"\(QueryNode.literalText(constant))\" in quotes)"
        case (.array, _):
            return " (to test its elements, use any or all)"
        default:
            return ""
        }
    }

    // MARK: - Paths

    /// Resolves a path in `scope`, reporting the first name that the shape does not have (unless
    /// `absenceIsAnError` is false) or that reads a field of a scalar.
    private mutating func resolve(
        _ path: [String], isElement: Bool, in scope: Scope, absenceIsAnError: Bool = true
    ) -> Operand? {
        let column = path.isEmpty ? scope.column : nextColumn(path, isElement: isElement)
        let operand = Operand(shape: .any, collection: scope.collection, column: column, chain: scope.chain, path: path)
        var shape = scope.shape
        var throughArray = false
        var index = 0
        while index < path.count {
            let component = path[index]
            switch shape {
            case .any, .mixed, .cycle:
                return operand
            case .array(let element):
                // Reading through an array reads each element's field.
                shape = element
                throughArray = true
            case .map(let fields):
                if let field = fields.first(where: { $0.name == component }) {
                    shape = field.shape
                    index += 1
                    continue
                }
                // Nothing known of an object without fields (a dictionary that was always empty).
                guard !fields.isEmpty, absenceIsAnError else { return operand }
                let names = fields.map(\.name)
                let suggestion = NameSuggestion.closest(to: component, among: names).map { "did you mean \($0)? " }
                report(
                    .unknownField,
                    "\(name(path[..<index], in: scope)) has no field \"\(component)\" "
                        + "(\(suggestion ?? "")it has: \(names.joined(separator: ", ")))",
                    column: column,
                    evidence: QueryProblem.Evidence(chain: scope.chain, path: Array(path[...index]), test: .exists))
                return operand
            case .scalar:
                report(
                    .unknownField,
                    "\(name(path[..<index], in: scope)) is \(Kind(shape)?.name ?? "a value") and has no field \"\(component)\"",
                    column: column,
                    evidence: QueryProblem.Evidence(chain: scope.chain, path: Array(path[...index]), test: .exists))
                return operand
            }
        }
        if throughArray, case .array = shape {
            operand.shape = shape
        } else {
            operand.shape = throughArray ? .array(shape) : shape
        }
        return operand
    }

    /// The column of the next written path, which should be `path`.
    private mutating func nextColumn(_ path: [String], isElement: Bool) -> Int? {
        defer { visited += 1 }
        var path = path
        if !isElement, let first = path.first, let read = related[first] { path[0] = read.field }
        if visited < writtenPaths.count, writtenPaths[visited].path == path,
            writtenPaths[visited].isElement == isElement
        {
            return writtenPaths[visited].column
        }
        return writtenPaths.first { $0.path == path && $0.isElement == isElement }?.column
    }

    /// How messages name the part of `scope` at `path`: `Book.address.city`, `an element of
    /// Book.items`, `price of an element of Book.items`.
    private func name(_ path: ArraySlice<String>, in scope: Scope) -> String {
        Self.name(path, entity: entity, related: related, collection: scope.collection)
    }

    /// How messages name `operand`.
    private func name(_ operand: Operand) -> String {
        Self.name(operand.path[...], entity: entity, related: related, collection: operand.collection)
    }

    /// `name(_:in:)` for a scope of `collection` (nil: the record) in `entity`. A path through a
    /// relationship is named from the related entity: `Recipe.name (through Ingredient.recipe)`.
    private static func name(
        _ path: ArraySlice<String>, entity: String, related: [String: Related], collection: String?
    ) -> String {
        guard let collection else {
            if let first = path.first, let read = related[first] {
                return ([read.entity] + path.dropFirst()).joined(separator: ".")
                    + " (through \(entity).\(read.field))"
            }
            return ([entity] + path).joined(separator: ".")
        }
        let element = "an element of \(collection)"
        return path.isEmpty ? element : path.joined(separator: ".") + " of " + element
    }

    private mutating func report(
        _ code: RillError.Code, _ message: String, column: Int?, evidence: QueryProblem.Evidence?
    ) {
        problems.append(QueryProblem(code: code, message: message, column: column, evidence: evidence))
    }
}

/// The kinds of value a query tells apart: those that compare with each other are one kind.
private enum Kind {
    case bool, number, string, url, data, date, uuid, array, object

    init?(_ shape: RecordShape) {
        switch shape {
        case .any, .mixed: return nil
        case .array, .cycle: self = .array
        case .map: self = .object
        case .scalar(let example): self.init(example)
        }
    }

    init?(_ value: RecordValue) {
        switch value {
        case .null: return nil
        case .bool: self = .bool
        case .int, .uint, .float, .double, .decimal: self = .number
        case .string: self = .string
        case .url: self = .url
        case .data: self = .data
        case .date: self = .date
        case .uuid: self = .uuid
        case .array: self = .array
        case .map: self = .object
        }
    }

    var name: String {
        switch self {
        case .bool: "a Bool"
        case .number: "a number"
        case .string: "a string"
        case .url: "a URL"
        case .data: "data"
        case .date: "a date"
        case .uuid: "a UUID"
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Whether a value of this kind can equal or order with `constant` (`QueryValueOrder.compare`).
    func compares(with constant: RecordValue) -> Bool {
        switch (self, constant) {
        case (.number, .int), (.number, .uint), (.number, .float), (.number, .double), (.number, .decimal):
            return true
        case (.string, .string), (.string, .url), (.url, .string), (.url, .url), (.string, .uuid):
            return true
        case (.bool, .bool), (.date, .date), (.data, .data), (.uuid, .uuid):
            return true
        case (.uuid, .string(let text)):
            return UUIDText.uuid(text) != nil
        default:
            return false
        }
    }
}
