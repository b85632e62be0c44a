import Foundation
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The byte matcher against `QueryEvaluator`: random records (mixed kinds, non-ASCII and
/// combining text, NaN, infinities, extreme integers, decimals, missing fields, nested maps and
/// arrays) and random predicates of every compiled shape, each decided on the record's bytes and
/// evaluated on its `RecordValue`; then scans of a store with the matcher against brute force.
@Suite struct RecordMatcherTests {
    let directory = TemporaryDirectory()

    struct Generator {
        var random: SeededGenerator

        mutating func pick<T>(_ values: [T]) -> T { values.randomElement(using: &random)! }
        mutating func chance(_ n: Int) -> Bool { Int.random(in: 0..<n, using: &random) == 0 }

        static let texts = [
            "", "a", "A", "ab", "abc", "ABC", "aBc", "entry 99999", "entry 1234", "99999", "x99999y", "café", "cafe",
            "cafe\u{301}", "CAFÉ", "Straße", "STRASSE", "K", "k", "\u{212A}", "e\u{301}", "\u{301}", "a\r\nb", "a\rb",
            "a\nb", "\r\n", "ﬀ", "ff", "ñ", "n", "zebra", "Zebra", "apple", "applé", " ", "a b", "~", "`", "^a",
            "ab\u{0}c", "日本", "🎉 party",
            // A first byte met again before the match: the search goes on past a candidate.
            "aab", "9a99999", "cacaf", "xbxab",
            // Text that another text equals without its bytes: a stored UUID's, and the three ASCII
            // characters a single other scalar is canonically equivalent to.
            "01020304-0506-0708-090a-0b0c0d0e0f10", "a;b", "a\u{37E}b", "\u{1FEF}", "OK", "O\u{212A}",
        ]
        static let patterns = [
            "", "a", "A", "b", "ab", "AB", "abc", "99999", "9", "e", "E", "é", "K", "k", "\u{212A}", "\r", "\n", "\r\n",
            "b\r", "ss", "SS", "ff", "caf", "CAF", "café", " ", "~", "`", "^", "ra", "\u{301}",
            // `like` wildcards.
            "*", "a*", "*b", "?", "c?f*", "*é*", "*99999*", "??", ";", "a;", "OK", "O",
        ]
        static let doubles: [Double] = [
            .nan, .infinity, -.infinity, 0, -0.0, 1, -1, 1.5, -2.5, 99990, 99990.5, 1e300, -1e300, 0x1p63, -0x1p63,
            0x1p64, 9_007_199_254_740_992, .leastNonzeroMagnitude, 42,
        ]
        static let ints: [Int64] = [.min, .max, 0, 1, -1, 42, 99990, 99991, 9_007_199_254_740_993, -5]
        static let uints: [UInt64] = [.max, 0, 1, 42, 1 << 63, 99990]
        static let decimals = ["1.5", "42", "-0", "NaN", "99990.1", "123456789012345678901234567890", "0.1"]
        static let dates = [0.0, -1.5, 1e9, 7e8, .nan, .infinity]

        mutating func number() -> RecordValue {
            switch Int.random(in: 0..<5, using: &random) {
            case 0: return .int(pick(Self.ints))
            case 1: return .uint(pick(Self.uints))
            case 2: return .float(Float(pick(Self.doubles)))
            case 3: return .decimal(pick(Self.decimals))
            default: return .double(pick(Self.doubles))
            }
        }

        mutating func scalar() -> RecordValue {
            switch Int.random(in: 0..<12, using: &random) {
            case 0: return .null
            case 1: return .bool(chance(2))
            case 2, 3, 4: return number()
            case 5, 6, 7: return .string(pick(Self.texts))
            case 8: return .url(pick(["https://a.b/c", "K", "abc", "café"]))
            case 9: return .date(Date(timeIntervalSinceReferenceDate: pick(Self.dates)))
            case 10: return .uuid(pick([UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)), UUID()]))
            default: return .data(Data([1, 2, 3]))
            }
        }

        /// A value for a field: mostly of the field's usual kind, sometimes of any kind.
        mutating func value(_ field: String, depth: Int = 0) -> RecordValue {
            if chance(8) { return scalar() }
            switch field {
            case "n": return number()
            case "s": return .string(pick(Self.texts))
            case "b": return .bool(chance(2))
            case "d": return .date(Date(timeIntervalSinceReferenceDate: pick(Self.dates)))
            case "u" where chance(3):
                // An array of scalars, sometimes with a map or an array in it.
                return .array(
                    (0..<Int.random(in: 0...3, using: &random)).map { _ in
                        chance(6)
                            ? (chance(2) ? map(depth: 1) : .array([scalar()]))
                            : (chance(2) ? .int(Int64.random(in: 0...2, using: &random)) : scalar())
                    })
            case "m" where depth == 0:
                if chance(4) { return .array((0..<Int.random(in: 0...2, using: &random)).map { _ in map(depth: 1) }) }
                return map(depth: 1)
            default: return scalar()
            }
        }

        mutating func map(depth: Int) -> RecordValue {
            var fields: [RecordField] = []
            for name in ["x", "y", "z"] where !chance(4) {
                fields.append(RecordField(name: name, value: depth < 2 && chance(5) ? map(depth: depth + 1) : scalar()))
            }
            return .map(fields)
        }

        mutating func record() -> RecordValue {
            var fields: [RecordField] = []
            for name in ["n", "s", "b", "d", "m", "u"].shuffled(using: &random) where !chance(6) {
                fields.append(RecordField(name: name, value: value(name)))
            }
            // Now and then a field named twice (the first one is read).
            if chance(30), let first = fields.first { fields.append(RecordField(name: first.name, value: scalar())) }
            return .map(fields)
        }

        static let paths: [[String]] = [
            ["n"], ["s"], ["b"], ["d"], ["m"], ["u"], ["m", "x"], ["m", "y"], ["m", "x", "z"], ["missing"], ["n", "x"],
        ]

        mutating func constant() -> QueryNode {
            if chance(3) { return .literal(.string(pick(Self.texts))) }
            return .literal(scalar())
        }

        /// Arithmetic on fields and numbers (extremes among them), or one of them.
        mutating func arithmetic(depth: Int) -> QueryNode {
            if depth == 0 || chance(4) {
                if chance(2) { return .field(pick([["n"], ["n"], ["m", "x"], ["s"], ["missing"]])) }
                return chance(2) ? .literal(number()) : .literal(.int(pick([0, 1, 2, -1, .max, .min])))
            }
            if chance(6) { return .negate(arithmetic(depth: depth - 1)) }
            return .arithmetic(
                pick(QueryArithmetic.allCases), arithmetic(depth: depth - 1), arithmetic(depth: depth - 1))
        }

        /// `node` with most of its fields read from a quantifier's current element instead.
        mutating func elementBody(_ node: QueryNode) -> QueryNode {
            switch node {
            case .field: return chance(4) ? node : .element(pick([[], [], ["x"], ["y"], ["x", "z"]]))
            case .compare(let op, let a, let b): return .compare(op, elementBody(a), elementBody(b))
            case .string(let test, let a, let b, let options): return .string(test, elementBody(a), b, options)
            case .isIn(let a, let list): return .isIn(elementBody(a), list)
            case .between(let a, let lower, let upper): return .between(elementBody(a), lower: lower, upper: upper)
            case .and(let list): return .and(list.map { elementBody($0) })
            case .or(let list): return .or(list.map { elementBody($0) })
            case .not(let a): return .not(elementBody(a))
            case .count(let a): return .count(elementBody(a))
            case .coalesce(let a, let b): return .coalesce(elementBody(a), b)
            case .arithmetic(let op, let a, let b): return .arithmetic(op, elementBody(a), elementBody(b))
            case .negate(let a): return .negate(elementBody(a))
            default: return node
            }
        }

        /// `field ?? constant`.
        mutating func coalesced() -> QueryNode {
            .coalesce(.field(pick(Self.paths)), chance(3) ? .literal(.string(pick(Self.texts))) : constant())
        }

        mutating func leaf() -> QueryNode {
            let path = pick(Self.paths)
            switch Int.random(in: 0..<20, using: &random) {
            case 18, 19:
                // Arithmetic on fields and numbers, compared with a number or a field.
                return .compare(
                    pick(QueryComparison.allCases), arithmetic(depth: 2), chance(3) ? .field(path) : constant())
            case 14:
                // A count with a constant: arrays, maps, text, data, anything else.
                let counted = QueryNode.count(.field(pick([["u"], ["m"], ["s"], ["m", "x"], ["missing"], ["n"]])))
                let number: QueryNode = chance(3) ? constant() : .literal(.int(Int64.random(in: 0...4, using: &random)))
                return chance(2)
                    ? .compare(pick(QueryComparison.allCases), counted, number)
                    : .compare(pick(QueryComparison.allCases), number, counted)
            case 15:
                // `isEmpty`.
                return .compare(.equal, .count(.field(pick([["u"], ["m"], ["s"]]))), .literal(.int(0)))
            case 16, 17:
                // `any`/`all` of an array's elements: a body of any shape, reading the element (or a
                // path in it) and now and then the record.
                let collection = QueryNode.field(pick([["u"], ["m"], ["s"], ["missing"], ["m", "x"]]))
                // Small integers, which the arrays hold often: bodies that hold for some elements only.
                // Or a record's field with a fallback compared with the element.
                let body: QueryNode
                switch Int.random(in: 0..<4, using: &random) {
                case 0, 1: body = elementBody(predicate(depth: 1))
                case 2:
                    body = .compare(
                        pick(QueryComparison.allCases), .element([]),
                        .literal(.int(Int64.random(in: 0...2, using: &random))))
                default:
                    body = .compare(
                        pick(QueryComparison.allCases),
                        .coalesce(.field(pick(Self.paths)), .literal(.int(Int64.random(in: 0...2, using: &random)))),
                        .element([]))
                }
                return chance(2) ? .any(collection, body: body) : .all(collection, body: body)
            case 9:
                // Two fields compared.
                return .compare(pick(QueryComparison.allCases), .field(path), .field(pick(Self.paths)))
            case 10:
                return chance(2)
                    ? .compare(pick(QueryComparison.allCases), coalesced(), constant())
                    : .compare(pick(QueryComparison.allCases), constant(), coalesced())
            case 11:
                let options = pick([QueryStringOptions(), .caseInsensitive])
                let test = pick([QueryStringTest.contains, .beginsWith, .endsWith])
                return .string(
                    test,
                    .coalesce(.field(pick([["s"], ["m", "y"], ["missing"]])), .literal(.string(pick(Self.texts)))),
                    .literal(.string(pick(Self.patterns))), options)
            case 12:
                return .isIn(coalesced(), (0..<Int.random(in: 0...3, using: &random)).map { _ in constant() })
            case 13:
                return .between(coalesced(), lower: constant(), upper: constant())
            case 0, 1:
                return .compare(pick(QueryComparison.allCases), .field(path), constant())
            case 2:
                return .compare(pick(QueryComparison.allCases), constant(), .field(path))
            case 3, 4:
                let options = pick([
                    QueryStringOptions(), .caseInsensitive, .diacriticInsensitive,
                    [.caseInsensitive, .diacriticInsensitive],
                ])
                let test = pick([QueryStringTest.contains, .beginsWith, .endsWith, .contains, .like])
                return .string(
                    test, .field(pick([["s"], ["s"], ["m", "y"], ["n"]])), .literal(.string(pick(Self.patterns))),
                    options)
            case 5:
                return .isIn(.field(path), (0..<Int.random(in: 0...3, using: &random)).map { _ in constant() })
            case 6:
                return .between(.field(path), lower: constant(), upper: constant())
            case 7:
                return .field(pick([["b"], ["m", "x"]]))
            default:
                // Not compiled: decided on the `RecordValue`.
                return .compare(
                    pick(QueryComparison.allCases), .arithmetic(.add, .field(["n"]), .literal(.string("1"))),
                    constant())
            }
        }

        mutating func predicate(depth: Int) -> QueryNode {
            guard depth > 0, !chance(3) else { return leaf() }
            switch Int.random(in: 0..<3, using: &random) {
            case 0: return .and([predicate(depth: depth - 1), predicate(depth: depth - 1)])
            case 1: return .or([predicate(depth: depth - 1), predicate(depth: depth - 1)])
            default: return .not(predicate(depth: depth - 1))
            }
        }
    }

    @Test func byteDecisionsEqualTheEvaluator() throws {
        var generator = Generator(random: SeededGenerator(label: "record matcher oracle"))
        let records = (0..<OracleScale.records(default: 400)).map { _ in generator.record().recordBytes() }
        var decided = 0
        var total = 0
        for round in 0..<OracleScale.queries(default: 600) {
            let node = generator.predicate(depth: 2)
            guard let matcher = RecordMatcher(node), let fields = node.topLevelFields else { continue }
            var failures = 0
            try RecordMatcher.withProgram(matcher) { program in
                for bytes in records {
                    try bytes.withUnsafeBytes { bytes in
                        let record = try RecordValue(record: bytes, fields: fields)
                        let expected = QueryEvaluator.matches(node, record)
                        let decision = program!.decide(bytes)
                        total += 1
                        guard decision != .unknown else { return }
                        decided += 1
                        if (decision == .yes) != expected, failures < 3 {
                            failures += 1
                            Issue.record("round \(round): \(node) on \(record): \(decision), evaluator \(expected)")
                        }
                    }
                }
            }
            if failures > 0 { break }
        }
        // The matcher means something only if it decides most records itself.
        #expect(decided > total / 2, "the matcher decided \(decided) of \(total)")
        print("[record matcher oracle] decided \(decided) of \(total) record tests on the bytes")
    }

    /// Every text against every pattern, for each string test and its options: the byte search
    /// against the evaluator, exhaustively.
    @Test func stringTestsOfEveryTextAndPatternEqualTheEvaluator() throws {
        let options: [QueryStringOptions] = [[], .caseInsensitive, .diacriticInsensitive]
        var decided = 0
        for text in Generator.texts {
            let bytes = RecordValue.map([RecordField(name: "s", value: .string(text))]).recordBytes()
            let record = try bytes.withUnsafeBytes { try RecordValue(record: $0) }
            for pattern in Generator.patterns {
                for test in [QueryStringTest.contains, .beginsWith, .endsWith, .like] {
                    for option in options {
                        let node = QueryNode.string(test, .field(["s"]), .literal(.string(pattern)), option)
                        guard let matcher = RecordMatcher(node) else { continue }
                        let decision = RecordMatcher.withProgram(matcher) { program in
                            bytes.withUnsafeBytes { program!.decide($0) }
                        }
                        guard decision != .unknown else { continue }
                        decided += 1
                        #expect(
                            (decision == .yes) == QueryEvaluator.matches(node, record),
                            "\(test) \(pattern.debugDescription) in \(text.debugDescription), options \(option)")
                    }
                }
            }
        }
        #expect(decided > 1000, "only \(decided) string tests decided on the bytes")
    }

    /// The ASCII text `RecordMatcher.requiredBytes` leaves out is exactly what `String` finds
    /// equal to other text: over every Unicode scalar, those that equal an ASCII character, or
    /// two, are equivalent to `K`, `;` and `` ` `` alone.
    @Test func requiredBytesLeaveOutTheTextOthersEqual() {
        var ascii: [String: [UInt8]] = [:]
        for a in UInt8(0)..<0x80 {
            ascii[String(UnicodeScalar(a))] = [a]
            for b in UInt8(0)..<0x80 { ascii[String(UnicodeScalar(a)) + String(UnicodeScalar(b))] = [a, b] }
        }
        var equivalents: Set<UInt8> = []
        for value in UInt32(0x80)...0x10FFFF {
            guard let scalar = UnicodeScalar(value), let bytes = ascii[String(scalar)] else { continue }
            #expect(bytes.count == 1, "U+\(String(value, radix: 16)) equals \(bytes)")
            equivalents.formUnion(bytes)
        }
        #expect(equivalents == [UInt8(ascii: "K"), UInt8(ascii: ";"), UInt8(ascii: "`")])
        #expect(equivalents.isSubset(of: RecordMatcher.unrigidBytes))
    }

    /// A filter whose `and` needs a field to hold or equal some text decides a record without
    /// those bytes `no` before reading a field: even a record that is not well formed.
    @Test func requiredBytesDecideWithoutReading() throws {
        let contains = QueryNode.string(.contains, .field(["s"]), .literal(.string("bc")), [])
        let equal = QueryNode.compare(.equal, .literal(.string("abcd")), .field(["s"]))
        let good = RecordValue.map([RecordField(name: "s", value: .string("abcd"))]).recordBytes()
        var lacking = good
        lacking[lacking.count - 3] = 0xFF
        for node in [contains, equal, .and([.compare(.greater, .field(["n"]), .literal(.int(1))), contains])] {
            let matcher = try #require(RecordMatcher(node))
            #expect(!matcher.required.isEmpty, "\(node)")
            RecordMatcher.withProgram(matcher) { program in
                lacking.withUnsafeBytes { #expect(program!.decide($0) == .no, "\(node)") }
            }
        }
        for node in [contains, equal] {
            RecordMatcher.withProgram(RecordMatcher(node)) { program in
                good.withUnsafeBytes { #expect(program!.decide($0) == .yes, "\(node)") }
            }
        }
        // None taken under `or` or `not`, with options, through a path, or of a UUID's text.
        let none: [QueryNode] = [
            .or([contains, .compare(.equal, .field(["n"]), .literal(.int(1)))]), .not(contains),
            .string(.contains, .field(["s"]), .literal(.string("bc")), .caseInsensitive),
            .string(.contains, .field(["m", "s"]), .literal(.string("bc")), []),
            .string(.contains, .field(["s"]), .literal(.string("OK")), []),
            .compare(.equal, .field(["s"]), .literal(.string("01020304-0506-0708-090a-0b0c0d0e0f10"))),
        ]
        for node in none { #expect(RecordMatcher(node)?.required.isEmpty != false, "\(node)") }
        // A stored UUID equals its text, which the record does not hold.
        let uuid = UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16))
        let record = RecordValue.map([RecordField(name: "s", value: .uuid(uuid))])
        let node = QueryNode.compare(.equal, .field(["s"]), .literal(.string(uuid.uuidString.lowercased())))
        #expect(QueryEvaluator.matches(node, record))
        RecordMatcher.withProgram(RecordMatcher(node)) { program in
            record.recordBytes().withUnsafeBytes { #expect(program?.decide($0) != .no) }
        }
    }

    /// Malformed records are never decided: the `RecordValue` path reports them.
    @Test func malformedRecordsAreLeftToTheRecordValuePath() throws {
        // `>=`: no text the record must hold (see `requiredBytesDecideWithoutReading`).
        let node = QueryNode.compare(.greaterOrEqual, .field(["s"]), .literal(.string("a")))
        let matcher = try #require(RecordMatcher(node))
        let good = RecordValue.map([RecordField(name: "s", value: .string("a"))]).recordBytes()
        var invalidText = good
        invalidText[invalidText.count - 2] = 0xFF
        var trailing = good
        trailing.append(0)
        for bytes in [invalidText, trailing, Array(good.dropLast()), [2] + good.dropFirst()] {
            RecordMatcher.withProgram(matcher) { program in
                bytes.withUnsafeBytes { #expect(program!.decide($0) == .unknown) }
                #expect(throws: (any Error).self) { try bytes.withUnsafeBytes { try RecordValue(record: $0) } }
            }
        }
        RecordMatcher.withProgram(matcher) { program in
            good.withUnsafeBytes { #expect(program!.decide($0) == .yes) }
        }
    }

    struct Sample: PersistentModel {
        struct Spec: Codable, Hashable, Sendable {
            var label: String
            var size: Int?
        }
        var id: Int
        var name: String
        var note: String?
        var amount: Double
        var count: Int?
        var flag: Bool?
        var when: Date
        var price: Decimal?
        var spec: Spec

        static let indexes: [ModelIndex<Sample>] = [ModelIndex(\.amount)]
    }

    /// Full scans with the matcher, typed fetches among them, against the evaluator applied to
    /// every stored record.
    @Test func scansEqualBruteForce() throws {
        var generator = Generator(random: SeededGenerator(label: "record matcher scans"))
        let container = try ModelContainer(
            for: Sample.self, configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let context = container.mainContext
        let samples = (0..<OracleScale.records(default: 500)).map { id in
            Sample(
                id: id, name: generator.pick(Generator.texts),
                note: generator.chance(3) ? nil : generator.pick(Generator.texts),
                amount: generator.pick(Generator.doubles),
                count: generator.chance(3) ? nil : Int(generator.pick(Generator.ints)),
                flag: generator.chance(3) ? nil : generator.chance(2),
                when: Date(timeIntervalSinceReferenceDate: generator.pick(Generator.dates)),
                price: generator.chance(2) ? nil : Decimal(string: generator.pick(Generator.decimals)),
                spec: Sample.Spec(
                    label: generator.pick(Generator.texts),
                    size: generator.chance(3) ? nil : Int(generator.pick(Generator.ints))))
        }
        for sample in samples { context.insert(sample) }
        try context.save()
        let store = container.store
        let entity = try #require(try store.entity(named: Sample.entityName))
        let paths: [[String]] = [
            ["name"], ["note"], ["amount"], ["count"], ["flag"], ["when"], ["price"], ["spec", "label"],
            ["spec", "size"],
        ]
        var nonEmpty = 0
        for round in 0..<OracleScale.queries(default: 300) {
            var node = generator.predicate(depth: 2)
            node = Self.rename(node, paths: paths, using: &generator)
            var ids: [Int] = []
            let execution = QueryExecution(
                store: store, entity: entity, predicate: node, isExact: true, sort: nil, limit: nil, forceScan: true,
                transaction: nil)
            try execution.forEachMatch { key, _ in
                ids.append(Int(storageKey: key)!)
                return true
            }
            let expected = try samples.filter { sample in
                try RecordCoder.encode(sample).withUnsafeBytes { bytes in
                    QueryEvaluator.matches(node, try RecordValue(record: bytes))
                }
            }.map(\.id)
            #expect(ids == expected, "round \(round): \(node)")
            if ids != expected { break }
            if !ids.isEmpty, ids.count < samples.count { nonEmpty += 1 }
        }
        #expect(nonEmpty > 20, "only \(nonEmpty) scans selected a proper subset")

        // Typed fetches whose translation the matcher decides.
        let needle = "a"
        let cases: [(FetchDescriptor<Sample>, (Sample) -> Bool)] = [
            (FetchDescriptor(predicate: #Predicate { $0.name.contains(needle) }), { $0.name.contains(needle) }),
            (FetchDescriptor(predicate: #Predicate { $0.amount > 1.0 }), { $0.amount > 1.0 }),
            (
                FetchDescriptor(predicate: #Predicate { $0.amount != 42 || $0.name == "K" }),
                { $0.amount != 42 || $0.name == "K" }
            ),
            (
                FetchDescriptor(predicate: #Predicate { $0.flag == true && $0.spec.label.starts(with: "a") }),
                { $0.flag == true && $0.spec.label.starts(with: "a") }
            ),
            (FetchDescriptor(predicate: #Predicate { $0.count == nil }), { $0.count == nil }),
        ]
        for (descriptor, check) in cases {
            let fetched = try context.fetch(descriptor).map(\.id).sorted()
            #expect(fetched == samples.filter(check).map(\.id), "\(String(describing: descriptor.predicate))")
        }
    }

    /// `node` with the generator's field paths replaced by the sample's.
    static func rename(_ node: QueryNode, paths: [[String]], using generator: inout Generator) -> QueryNode {
        switch node {
        case .field: return .field(generator.pick(paths))
        case .literal: return node
        case .compare(let op, let a, let b):
            return .compare(op, rename(a, paths: paths, using: &generator), rename(b, paths: paths, using: &generator))
        case .string(let test, let a, let b, let options):
            return .string(test, rename(a, paths: paths, using: &generator), b, options)
        case .isIn(let a, let list): return .isIn(rename(a, paths: paths, using: &generator), list)
        case .between(let a, let lower, let upper):
            return .between(rename(a, paths: paths, using: &generator), lower: lower, upper: upper)
        case .and(let list): return .and(list.map { rename($0, paths: paths, using: &generator) })
        case .or(let list): return .or(list.map { rename($0, paths: paths, using: &generator) })
        case .not(let a): return .not(rename(a, paths: paths, using: &generator))
        case .arithmetic(let op, let a, let b):
            return .arithmetic(op, rename(a, paths: paths, using: &generator), b)
        case .coalesce(let a, let b): return .coalesce(rename(a, paths: paths, using: &generator), b)
        case .count(let a): return .count(rename(a, paths: paths, using: &generator))
        case .any(let a, let body): return .any(rename(a, paths: paths, using: &generator), body: body)
        case .all(let a, let body): return .all(rename(a, paths: paths, using: &generator), body: body)
        default: return node
        }
    }
}
