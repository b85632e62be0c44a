import Foundation

/// A query with its constants' values left out: what text queries of one form share, such as
/// `Entry where code == 12` and `Entry where code == 9071`.
///
/// Two queries have the same shape when they read the same entity, have the same tree of
/// operators, the same field paths and sort keys, a limit and an offset or none alike, and
/// constants of the same kinds in the same places. What `Store.check` judges, and what
/// `QueryPlanner` chooses an index by, is a matter of shape alone — with one exception, a string
/// that spells a UUID (it compares with a UUID field, and is keyed twice), so that is part of a
/// string's kind here. The values, and the limit's and offset's numbers, are the rest.
enum QueryShape {
    /// A hash of `query`'s shape: equal for queries of one shape, and seldom for others.
    static func fingerprint(of query: Query) -> UInt64 {
        var hasher = ShapeHasher()
        hasher.mix(query.entity)
        hasher.mix(UInt64(query.sort.count))
        for key in query.sort {
            hasher.mix(key.path)
            hasher.mix(key.ascending ? 1 : 2)
        }
        hasher.mix((query.limit == nil ? 1 : 2) | (query.offset == nil ? 4 : 8))
        if let predicate = query.predicate {
            predicate.hashShape(into: &hasher)
        } else {
            hasher.mix(0xFF)
        }
        return hasher.value
    }

    /// Whether the two queries have the same shape.
    static func same(_ a: Query, _ b: Query) -> Bool {
        guard a.entity == b.entity, a.sort == b.sort, (a.limit == nil) == (b.limit == nil),
            (a.offset == nil) == (b.offset == nil)
        else { return false }
        switch (a.predicate, b.predicate) {
        case (nil, nil): return true
        case (let x?, let y?): return x.hasSameShape(as: y)
        default: return false
        }
    }
}

/// The hash of a query's shape: a multiply-and-xor over 64-bit words, a name taken eight bytes
/// at a time. Cheaper than `Hasher` for the few words a shape has; a collision costs only a
/// comparison of the trees, which tells the shapes apart.
struct ShapeHasher {
    private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325

    mutating func mix(_ word: UInt64) {
        value = (value ^ word) &* 0x0000_0100_0000_01B3
        value ^= value >> 29
    }

    mutating func mix(_ text: String) {
        let mixed: Void? = text.utf8.withContiguousStorageIfAvailable { bytes in
            var word: UInt64 = UInt64(bytes.count)
            var shift: UInt64 = 8
            for byte in bytes {
                word ^= UInt64(byte) << (shift & 63)
                shift &+= 8
                if shift == 64 {
                    mix(word)
                    (word, shift) = (0, 0)
                }
            }
            mix(word)
        }
        if mixed == nil { mix(UInt64(bitPattern: Int64(text.hashValue))) }
    }

    mutating func mix(_ path: [String]) {
        mix(UInt64(path.count))
        for name in path { mix(name) }
    }
}

extension QueryNode {
    /// Hashes the node as `QueryShape` compares it: a constant by its kind only.
    func hashShape(into hasher: inout ShapeHasher) {
        hasher.mix(shapeTag)
        switch self {
        case .field(let path), .element(let path):
            hasher.mix(path)
        case .literal(let value):
            value.hashKind(into: &hasher)
        case .compare(let op, let lhs, let rhs):
            hasher.mix(op.rawValue)
            lhs.hashShape(into: &hasher)
            rhs.hashShape(into: &hasher)
        case .arithmetic(let op, let lhs, let rhs):
            hasher.mix(op.rawValue)
            lhs.hashShape(into: &hasher)
            rhs.hashShape(into: &hasher)
        case .string(let test, let lhs, let rhs, let options):
            hasher.mix(test.rawValue)
            hasher.mix(UInt64(options.rawValue))
            lhs.hashShape(into: &hasher)
            rhs.hashShape(into: &hasher)
        case .and(let operands), .or(let operands):
            Self.hashShapes(operands, into: &hasher)
        case .not(let operand), .count(let operand), .negate(let operand):
            operand.hashShape(into: &hasher)
        case .isIn(let value, let candidates):
            value.hashShape(into: &hasher)
            Self.hashShapes(candidates, into: &hasher)
        case .between(let first, let second, let third), .conditional(let first, let second, let third):
            first.hashShape(into: &hasher)
            second.hashShape(into: &hasher)
            third.hashShape(into: &hasher)
        case .any(let first, let second), .all(let first, let second), .coalesce(let first, let second):
            first.hashShape(into: &hasher)
            second.hashShape(into: &hasher)
        }
    }

    /// Which case the node is, as a number.
    private var shapeTag: UInt64 {
        switch self {
        case .field: 0
        case .element: 1
        case .literal: 2
        case .compare: 3
        case .and: 4
        case .or: 5
        case .not: 6
        case .string: 7
        case .isIn: 8
        case .between: 9
        case .any: 10
        case .all: 11
        case .count: 12
        case .arithmetic: 13
        case .negate: 14
        case .coalesce: 15
        case .conditional: 16
        }
    }

    private static func hashShapes(_ nodes: [QueryNode], into hasher: inout ShapeHasher) {
        hasher.mix(UInt64(nodes.count))
        for node in nodes { node.hashShape(into: &hasher) }
    }

    /// Whether the two nodes differ at most in their constants' values (see `QueryShape`).
    func hasSameShape(as other: QueryNode) -> Bool {
        switch (self, other) {
        case (.field(let a), .field(let b)), (.element(let a), .element(let b)):
            return a == b
        case (.literal(let a), .literal(let b)):
            return a.hasSameKind(as: b)
        case (.compare(let op, let a1, let a2), .compare(let other, let b1, let b2)):
            return op == other && a1.hasSameShape(as: b1) && a2.hasSameShape(as: b2)
        case (.arithmetic(let op, let a1, let a2), .arithmetic(let other, let b1, let b2)):
            return op == other && a1.hasSameShape(as: b1) && a2.hasSameShape(as: b2)
        case (.and(let a), .and(let b)), (.or(let a), .or(let b)):
            return Self.haveSameShapes(a, b)
        case (.not(let a), .not(let b)), (.count(let a), .count(let b)), (.negate(let a), .negate(let b)):
            return a.hasSameShape(as: b)
        case (.string(let test, let a1, let a2, let options), .string(let otherTest, let b1, let b2, let otherOptions)):
            return test == otherTest && options == otherOptions && a1.hasSameShape(as: b1) && a2.hasSameShape(as: b2)
        case (.isIn(let a, let aCandidates), .isIn(let b, let bCandidates)):
            return a.hasSameShape(as: b) && Self.haveSameShapes(aCandidates, bCandidates)
        case (.between(let a, let aLower, let aUpper), .between(let b, let bLower, let bUpper)),
            (.conditional(let a, let aLower, let aUpper), .conditional(let b, let bLower, let bUpper)):
            return a.hasSameShape(as: b) && aLower.hasSameShape(as: bLower) && aUpper.hasSameShape(as: bUpper)
        case (.any(let a1, let a2), .any(let b1, let b2)), (.all(let a1, let a2), .all(let b1, let b2)),
            (.coalesce(let a1, let a2), .coalesce(let b1, let b2)):
            return a1.hasSameShape(as: b1) && a2.hasSameShape(as: b2)
        default:
            return false
        }
    }

    private static func haveSameShapes(_ a: [QueryNode], _ b: [QueryNode]) -> Bool {
        guard a.count == b.count else { return false }
        for index in a.indices where !a[index].hasSameShape(as: b[index]) { return false }
        return true
    }
}

extension RecordValue {
    /// The kind of a constant, as `QueryShape` tells constants apart: its case, and for a string
    /// whether it spells a UUID.
    private var shapeKind: UInt8 {
        switch self {
        case .null: 0
        case .bool: 1
        case .int: 2
        case .uint: 3
        case .float: 4
        case .double: 5
        case .string(let text): UUIDText.uuid(text) == nil ? 6 : 7
        case .data: 8
        case .date: 9
        case .uuid: 10
        case .url: 11
        case .decimal: 12
        case .array: 13
        case .map: 14
        }
    }

    func hashKind(into hasher: inout ShapeHasher) {
        hasher.mix(UInt64(shapeKind))
        switch self {
        case .array(let elements):
            hasher.mix(UInt64(elements.count))
            for element in elements { element.hashKind(into: &hasher) }
        case .map(let fields):
            hasher.mix(UInt64(fields.count))
            for field in fields {
                hasher.mix(field.name)
                field.value.hashKind(into: &hasher)
            }
        default:
            break
        }
    }

    func hasSameKind(as other: RecordValue) -> Bool {
        guard shapeKind == other.shapeKind else { return false }
        switch (self, other) {
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { $0.hasSameKind(as: $1) }
        case (.map(let a), .map(let b)):
            return a.count == b.count
                && zip(a, b).allSatisfy { $0.name == $1.name && $0.value.hasSameKind(as: $1.value) }
        default:
            return true
        }
    }
}
