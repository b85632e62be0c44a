import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// A record nested as deep as the format allows is read, written back and rendered as JSON on a
/// thread with the stack of one of the daemon's connections (1 MiB), where any record a query
/// returns is parsed and rendered; one level deeper is refused with a typed error, not a crash.
@Suite struct RecordDepthTests {
    /// `levels` containers nested, maps and arrays in turn from the outermost, a map, each with a
    /// value beside the next.
    static func nested(_ levels: Int) -> RecordValue {
        var value = RecordValue.string("bottom")
        for level in 0..<levels {
            value =
                (levels - 1 - level).isMultiple(of: 2)
                ? .map([
                    RecordField(name: "level", value: .int(Int64(level))), RecordField(name: "inner", value: value),
                ])
                : .array([.double(Double(level)), value])
        }
        return value
    }

    /// Runs `body` on a new thread with a stack of `size` bytes and waits for it.
    static func onThread(stackSize size: Int, _ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            body()
            done.signal()
        }
        thread.stackSize = size
        thread.start()
        done.wait()
    }

    @Test func theDeepestRecordIsReadWrittenAndRenderedOnAConnectionsStack() {
        let deepest = Self.nested(RecordFormat.maxDepth)
        let bytes = deepest.recordBytes()
        let outcome = Lock<String?>(nil)
        Self.onThread(stackSize: 1 << 20) {
            do {
                let read = try bytes.withUnsafeBytes { try RecordValue(record: $0) }
                // Only the outermost field read: the nested one is skipped, its structure checked.
                let outer = try bytes.withUnsafeBytes { try RecordValue(record: $0, fields: ["level"]) }
                let json = read.jsonString()
                var differences: [String] = []
                if read != deepest { differences.append("the value") }
                if read.recordBytes() != bytes { differences.append("its bytes") }
                if read.hashValue != deepest.hashValue { differences.append("its hash") }
                if outer != .map([RecordField(name: "level", value: .int(Int64(RecordFormat.maxDepth - 1)))]) {
                    differences.append("its outermost field: \(outer)")
                }
                // Maps and arrays in turn: 256 of each close at the end.
                if !json.hasPrefix("{\"level\":511,\"inner\":[510.0,{\"level\":509,")
                    || !json.hasSuffix("{\"level\":1,\"inner\":[0.0,\"bottom\"]}" + String(repeating: "]}", count: 255))
                {
                    differences.append("its JSON: \(json.prefix(40))…\(json.suffix(20))")
                }
                if read.jsonString(pretty: true).isEmpty { differences.append("its pretty JSON") }
                outcome.withLock { $0 = differences.isEmpty ? nil : "differs: " + differences.joined(separator: ", ") }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
        }
        #expect(outcome.withLock { $0 } == nil)
    }

    @Test func oneLevelDeeperIsRefused() {
        let bytes = Self.nested(RecordFormat.maxDepth + 1).recordBytes()
        let outcome = Lock<String?>(nil)
        Self.onThread(stackSize: 1 << 20) {
            do {
                _ = try bytes.withUnsafeBytes { try RecordValue(record: $0) }
                outcome.withLock { $0 = "read" }
            } catch let error as RecordError {
                outcome.withLock { $0 = error.code == .nestingTooDeep ? "refused" : "\(error)" }
            } catch {
                outcome.withLock { $0 = "an untyped error: \(error)" }
            }
        }
        #expect(outcome.withLock { $0 } == "refused")
    }
}

extension RecordDepthTests {
    /// A random value nested up to `depth` levels, containers more likely than scalars near the top.
    static func randomValue(depth: Int, using random: inout SeededGenerator) -> RecordValue {
        let scalars: [RecordValue] = [
            .null, .bool(true), .int(.min), .int(-1), .uint(.max), .double(-0.0), .double(.infinity),
            .float(1.5), .string(""), .string("é🙂"), .data(Data([0, 255])), .uuid(UUID()), .url("a:b"),
            .decimal("1e-9"), .date(Date(timeIntervalSinceReferenceDate: -1)),
        ]
        guard depth > 0, Int.random(in: 0..<10, using: &random) < 8 else {
            return scalars.randomElement(using: &random)!
        }
        let count = Int.random(in: 0...3, using: &random)
        // At least one child goes deep, so that many values cross `RecordFormat.recursionDepth`.
        let children = (0..<count).map { index in
            randomValue(depth: index == 0 ? depth - 1 : Int.random(in: 0..<depth, using: &random), using: &random)
        }
        if Bool.random(using: &random) { return .array(children) }
        return .map(children.enumerated().map { RecordField(name: "k\($0.offset)", value: $0.element) })
    }

    /// Random values nested across the depth where reading turns from recursion to a loop read
    /// back equal; every cut of their bytes is refused with a typed error by the reader and by
    /// the skip of a field not asked for, and so is every byte changed to an end or an unknown tag,
    /// or else the bytes read as a value whose own bytes read back equal.
    @Test func valuesAcrossTheRecursionDepthReadBackAndBrokenOnesAreRefused() throws {
        var random = SeededGenerator(label: "RecordDepthTests.acrossTheRecursionDepth")
        for _ in 0..<200 {
            let inner = Self.randomValue(depth: Int.random(in: 10...40, using: &random), using: &random)
            let value = RecordValue.map([
                RecordField(name: "kept", value: .int(1)), RecordField(name: "deep", value: inner),
            ])
            let bytes = value.recordBytes()
            #expect(try bytes.withUnsafeBytes { try RecordValue(record: $0) } == value)
            #expect(
                try bytes.withUnsafeBytes { try RecordValue(record: $0, fields: ["kept"]) }
                    == .map([RecordField(name: "kept", value: .int(1))]))
            for cut in stride(from: 1, to: bytes.count, by: max(1, bytes.count / 40)) {
                let shorter = Array(bytes[..<cut])
                #expect(throws: RecordError.self) { try shorter.withUnsafeBytes { try RecordValue(record: $0) } }
                #expect(throws: RecordError.self) {
                    try shorter.withUnsafeBytes { try RecordValue(record: $0, fields: ["kept"]) }
                }
            }
            for _ in 0..<10 {
                var broken = bytes
                broken[Int.random(in: 1..<broken.count, using: &random)] = [0x0F, 0xEE, 0x0D, 0x0E].randomElement(
                    using: &random)!
                do {
                    let read = try broken.withUnsafeBytes { try RecordValue(record: $0) }
                    let again = read.recordBytes()
                    #expect(try again.withUnsafeBytes { try RecordValue(record: $0) } == read)
                } catch is RecordError {
                    // Refused, typed.
                }
            }
        }
    }
}

/// `levels` arrays nested, each in the one around it, through a child value for each level.
private struct NestedValues: Encodable {
    var levels: Int

    func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        if levels > 1 { try container.encode(NestedValues(levels: levels - 1)) }
    }
}

/// `levels` maps nested through `nestedContainer(keyedBy:forKey:)`, in a loop.
private struct NestedContainers: Encodable {
    var levels: Int

    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        for _ in 1..<levels { container = container.nestedContainer(keyedBy: Key.self, forKey: Key(stringValue: "in")) }
    }
}

/// A model whose value nests as deep as it is made to.
private struct Tree: PersistentModel {
    var id: Int
    var root: Node

    indirect enum Node: Codable, Hashable, Sendable {
        case leaf
        case branch([Node])
    }

    /// A node `levels` branches deep.
    static func node(_ levels: Int) -> Node {
        (0..<levels).reduce(Node.leaf) { inner, _ in .branch([inner]) }
    }
}

extension RecordDepthTests {
    /// The nesting of a parsed value: 0 for a scalar.
    static func depth(of value: RecordValue) -> Int {
        switch value {
        case .map(let fields): 1 + (fields.map { depth(of: $0.value) }.max() ?? 0)
        case .array(let elements): 1 + (elements.map { depth(of: $0) }.max() ?? 0)
        default: 0
        }
    }

    /// What encodes is what reads: a value nested as deep as a record may be encodes, and reads
    /// back; one level deeper is refused when it is encoded, whichever way its containers were
    /// opened, not written to be refused by every read after.
    @Test func encodingRefusesWhatNoReaderWouldRead() throws {
        for value in [
            { (levels: Int) in try RecordCoder.encode(NestedValues(levels: levels)) },
            { (levels: Int) in try RecordCoder.encode(NestedContainers(levels: levels)) },
        ] {
            let deepest = try value(RecordFormat.maxDepth)
            let read = try deepest.withUnsafeBytes { try RecordValue(record: $0) }
            #expect(Self.depth(of: read) == RecordFormat.maxDepth)
            let error = #expect(throws: RecordError.self) { try value(RecordFormat.maxDepth + 1) }
            #expect(error?.code == .unrepresentableValue)
            #expect(error?.description.contains("more than \(RecordFormat.maxDepth) levels deep") == true)
        }
    }

    /// A save of a model nested too deep fails alone, with an error that names the model, and
    /// nothing of it is written: the store's other models read as before.
    @Test func aSaveOfAModelNestedTooDeepIsRefusedWhole() throws {
        let directory = TemporaryDirectory()
        let container = try ModelContainer(
            for: Tree.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: directory.path("store"))))
        let context = container.mainContext
        context.insert(Tree(id: 1, root: Tree.node(3)))
        try context.save()
        // The record's map, three containers a branch (the case's map, its payload's, the array)
        // and two for the leaf: 3 × 169 + 3 = 510 levels fit, 3 × 170 + 3 = 513 do not.
        context.insert(Tree(id: 2, root: Tree.node(169)))
        context.insert(Tree(id: 3, root: Tree.node(170)))
        let error = #expect(throws: RillError.self) { try context.save() }
        #expect(error?.message.contains("Tree 3") == true, "\(error?.message ?? "")")
        #expect(error?.message.contains("more than \(RecordFormat.maxDepth) levels deep") == true)
        let fresh = ModelContext(container)
        #expect(try fresh.fetch(FetchDescriptor<Tree>()).map(\.id) == [1])
        // The one that fits saves once the other is gone.
        context.delete(Tree(id: 3, root: .leaf))
        try context.save()
        let saved = try ModelContext(container).fetch(FetchDescriptor<Tree>(sortBy: [SortDescriptor(\.id)]))
        #expect(saved.map(\.id) == [1, 2])
        #expect(saved.last?.root == Tree.node(169))
    }
}
