import Foundation

/// A translation made once for every predicate of one signature's structure, with stand-ins
/// where the captured values go: a prepared statement's counterpart for `#Predicate`s.
///
/// A fetch builds a new `Predicate` each time it captures other values (`#Predicate { $0.code ==
/// code }` in a function called with each `code`). Its expression is of the same type every time,
/// and its signature (`PredicateSignature`) has the same key paths, operators and variable
/// references. The translator reads the captured values only to put their stored forms into the
/// query form it builds, except that it looks at whether a value is null or an array, and at an
/// array's elements: so a translation made with each value replaced by a stand-in of the same
/// shape (null where it is null, an array of as many stand-ins where it is an array, a unique
/// stand-in for every other value) becomes the translation of any predicate of that structure
/// and those shapes once its stand-ins are replaced by that predicate's values.
///
/// The stand-ins are `.uuid` values with a prefix; a translator writes no identifier of its own
/// (only text, numbers, booleans and null), and every captured value of the template is a
/// stand-in, so replacing them cannot touch anything else. When a template
/// is made, the values its translator read are checked, conjunct by conjunct, against the values
/// the signature collected, in order: a tree whose two walks disagree is never prepared.
struct PreparedTranslation: Sendable {
    /// The shape of every captured value, conjunct by conjunct.
    let shapes: [[LiteralShape]]
    /// Whether each conjunct was translated (its stand-ins are in the template).
    let translated: [Bool]
    /// Where each conjunct's leaves start in `Leaves.values`.
    let leafStarts: [Int]

    init(shapes: [[LiteralShape]], translated: [Bool]) {
        self.shapes = shapes
        self.translated = translated
        var starts: [Int] = []
        var count = 0
        for (conjunct, conjunctShapes) in shapes.enumerated() {
            starts.append(count)
            if translated[conjunct] { count += conjunctShapes.reduce(0) { $0 + $1.leafCount } }
        }
        leafStarts = starts
    }

    /// The values that replace a template's stand-ins: every translated conjunct's, one after
    /// another, in one list (a fetch binds a template).
    struct Leaves {
        var values: [RecordValue]
        /// Where each conjunct's leaves start (the template's `leafStarts`).
        var starts: [Int]

        /// The leaf of stand-in `leaf` of `conjunct`.
        subscript(conjunct: Int, leaf: Int) -> RecordValue { values[starts[conjunct] + leaf] }
    }

    /// The captured values of `signature` as the leaves that replace the stand-ins; nil when a
    /// value has no stored form or another shape than this template's.
    func leaves(of signature: PredicateSignature) -> Leaves? {
        guard signature.conjunctCount == shapes.count else { return nil }
        var leaves: [RecordValue] = []
        leaves.reserveCapacity(signature.values.count)
        var fits = true
        signature.forEachConjunct { conjunct, values in
            guard fits, values.count == shapes[conjunct].count else {
                fits = false
                return
            }
            for (value, shape) in zip(values, shapes[conjunct]) {
                guard let value, LiteralShape(value) == shape else {
                    fits = false
                    return
                }
                if translated[conjunct] { LiteralShape.appendLeaves(of: value, to: &leaves) }
            }
        }
        return fits ? Leaves(values: leaves, starts: leafStarts) : nil
    }

    /// `node` with every stand-in replaced by its leaf.
    static func bind(_ node: QueryNode, to leaves: Leaves) -> QueryNode {
        func bound(_ node: QueryNode) -> QueryNode {
            switch node {
            case .field, .element:
                return node
            case .literal(let value):
                return .literal(bound(value))
            case .compare(let comparison, let a, let b):
                return .compare(comparison, bound(a), bound(b))
            case .and(let operands):
                return .and(operands.map(bound))
            case .or(let operands):
                return .or(operands.map(bound))
            case .not(let a):
                return .not(bound(a))
            case .string(let test, let a, let b, let options):
                return .string(test, bound(a), bound(b), options)
            case .isIn(let a, let candidates):
                return .isIn(bound(a), candidates.map(bound))
            case .between(let a, let lower, let upper):
                return .between(bound(a), lower: bound(lower), upper: bound(upper))
            case .any(let a, let body):
                return .any(bound(a), body: bound(body))
            case .all(let a, let body):
                return .all(bound(a), body: bound(body))
            case .count(let a):
                return .count(bound(a))
            case .arithmetic(let op, let a, let b):
                return .arithmetic(op, bound(a), bound(b))
            case .negate(let a):
                return .negate(bound(a))
            case .coalesce(let a, let b):
                return .coalesce(bound(a), bound(b))
            case .conditional(let condition, let then, let otherwise):
                return .conditional(bound(condition), then: bound(then), otherwise: bound(otherwise))
            }
        }
        func bound(_ value: RecordValue) -> RecordValue {
            switch value {
            case .uuid(let uuid):
                guard let (conjunct, leaf) = TranslationPreparation.standInPosition(uuid) else { return value }
                return leaves[conjunct, leaf]
            case .array(let items):
                return .array(items.map(bound))
            default:
                return value
            }
        }
        return bound(node)
    }
}

/// The shape of a captured value as the translator sees it: null, an array of values of their
/// own shapes, or anything else.
enum LiteralShape: Hashable, Sendable {
    case null
    case leaf
    case array([LiteralShape])

    init(_ value: RecordValue) {
        switch value {
        case .null: self = .null
        case .array(let items): self = .array(items.map(LiteralShape.init))
        default: self = .leaf
        }
    }

    /// Whether `value` is of this shape: `LiteralShape(value) == self`, without making one.
    func fits(_ value: RecordValue) -> Bool {
        switch (self, value) {
        case (.null, .null): true
        case (.array(let shapes), .array(let items)):
            shapes.count == items.count && zip(shapes, items).allSatisfy { $0.fits($1) }
        case (.leaf, .null), (.leaf, .array): false
        case (.leaf, _): true
        default: false
        }
    }

    /// How many values stand-ins replace in a value of this shape.
    var leafCount: Int {
        switch self {
        case .null: 0
        case .leaf: 1
        case .array(let items): items.reduce(0) { $0 + $1.leafCount }
        }
    }

    /// The values of `value` that stand-ins replace, in order: all but nulls and arrays.
    static func appendLeaves(of value: RecordValue, to leaves: inout [RecordValue]) {
        switch value {
        case .null: break
        case .array(let items): for item in items { appendLeaves(of: item, to: &leaves) }
        default: leaves.append(value)
        }
    }
}

/// The record of one preparation: the stand-ins handed to the translator and the values they
/// stand in for, conjunct by conjunct.
@usableFromInline
final class TranslationPreparation {
    /// The values the translator read, conjunct by conjunct, in the order it read them.
    private(set) var received: [[RecordValue]] = []
    /// Whether each conjunct was translated.
    private(set) var translated: [Bool] = []
    private var leafCount = 0

    /// The 8 bytes that open every stand-in.
    private static let prefix: UInt64 = 0x3F4C_4C49_52FF_00FF

    func beginConjunct() {
        received.append([])
        leafCount = 0
    }

    func endConjunct(translated: Bool) {
        self.translated.append(translated)
    }

    /// A value of `literal`'s shape whose leaves are stand-ins, and `literal` recorded.
    func standIn(for literal: RecordValue) -> RecordValue {
        received[received.count - 1].append(literal)
        return standIn(shaped: literal)
    }

    private func standIn(shaped value: RecordValue) -> RecordValue {
        switch value {
        case .null:
            return .null
        case .array(let items):
            return .array(items.map(standIn(shaped:)))
        default:
            let leaf = UInt64(leafCount)
            leafCount += 1
            return .uuid(Self.standIn(conjunct: UInt64(received.count - 1), leaf: leaf))
        }
    }

    private static func standIn(conjunct: UInt64, leaf: UInt64) -> UUID {
        let high = prefix
        let low = conjunct << 32 | leaf
        return withUnsafeBytes(of: (high.littleEndian, low.littleEndian)) { bytes in
            UUID(uuid: bytes.load(as: uuid_t.self))
        }
    }

    /// The conjunct and leaf a stand-in names; nil for any other identifier.
    static func standInPosition(_ uuid: UUID) -> (Int, Int)? {
        let (high, low) = withUnsafeBytes(of: uuid.uuid) { bytes in
            (
                UInt64(littleEndian: bytes.load(as: UInt64.self)),
                UInt64(littleEndian: bytes.load(fromByteOffset: 8, as: UInt64.self))
            )
        }
        guard high == prefix else { return nil }
        return (Int(low >> 32), Int(low & 0xFFFF_FFFF))
    }

    /// Whether `a` and `b` are the same value, a NaN included (which `==` tells apart from itself).
    private static func isIdentical(_ a: RecordValue, _ b: RecordValue) -> Bool {
        switch (a, b) {
        case (.double(let x), .double(let y)): return x.bitPattern == y.bitPattern
        case (.float(let x), .float(let y)): return x.bitPattern == y.bitPattern
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy(isIdentical)
        default: return a == b
        }
    }

    /// The template this preparation made, when what the translator read agrees with what
    /// `signature` collected: the same conjuncts, and in each translated conjunct the same values
    /// in the same order.
    func template(checkedAgainst signature: PredicateSignature) -> PreparedTranslation? {
        var literals: [ArraySlice<RecordValue?>] = []
        signature.forEachConjunct { _, values in literals.append(values) }
        guard literals.count == received.count, translated.count == received.count else { return nil }
        for (conjunct, values) in literals.enumerated() where translated[conjunct] {
            guard values.count == received[conjunct].count,
                zip(values, received[conjunct]).allSatisfy({ collected, read in
                    collected.map { Self.isIdentical($0, read) } ?? false
                })
            else { return nil }
        }
        var shapes: [[LiteralShape]] = []
        for values in literals {
            var conjunctShapes: [LiteralShape] = []
            for value in values {
                guard let value else { return nil }
                conjunctShapes.append(LiteralShape(value))
            }
            shapes.append(conjunctShapes)
        }
        return PreparedTranslation(shapes: shapes, translated: translated)
    }
}
