import Foundation
import RillLocks
import RillWorkloads
import Testing

@testable import Rill

/// A fetch decodes its rows with one root decoder (`RecordCoder.decode(_:from:reusing:)`): every
/// record must decode, or fail, exactly as it does with a decoder of its own.
@Suite struct RecordDecoderReuseTests {
    /// A record's fields, written in a chosen order, with any of them left out.
    struct Fields: Encodable {
        var entries: [(String, Value)]

        enum Value: Encodable {
            case int(Int), text(String), double(Double), date(Date), null, list([Int]), nested(Inner)

            func encode(to encoder: any Encoder) throws {
                var container = encoder.singleValueContainer()
                switch self {
                case .int(let value): try container.encode(value)
                case .text(let value): try container.encode(value)
                case .double(let value): try container.encode(value)
                case .date(let value): try container.encode(value)
                case .null: try container.encodeNil()
                case .list(let value): try container.encode(value)
                case .nested(let value): try container.encode(value)
                }
            }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: RecordCodingKey.self)
            for (name, value) in entries { try container.encode(value, forKey: RecordCodingKey(stringValue: name)) }
        }
    }

    struct Inner: Codable, Equatable {
        var x: Int
        var y: String?

        enum CodingKeys: String, CodingKey { case x, y }
    }

    /// The shape most rows have.
    struct Row: Codable, Equatable {
        var id: Int
        var name: String
        var amount: Double
        var when: Date
        var note: String?
        var inner: Inner?
        var list: [Int]?
    }

    /// More fields than the decoder keeps inline.
    struct Wide: Codable, Equatable {
        var f0: Int?, f1: Int?, f2: Int?, f3: Int?, f4: Int?, f5: Int?, f6: Int?, f7: Int?
        var f8: Int?, f9: Int?, f10: Int?, f11: Int?, f12: Int?, f13: Int?, f14: Int?, f15: Int?
    }

    /// The outcome of one decode, comparable across decoders: the value or the error's text.
    enum Outcome<T: Equatable>: Equatable {
        case value(T), failure(String)

        init(_ body: () throws -> T) {
            do { self = .value(try body()) } catch { self = .failure("\(error)") }
        }
    }

    static let names = ["id", "name", "amount", "when", "note", "inner", "list", "extra"]

    static func value(for name: String, _ random: inout SeededGenerator) -> Fields.Value {
        // Now and then a value of the wrong kind, so that some records fail.
        if Int.random(in: 0..<25, using: &random) == 0 { return .text("wrong") }
        let extremes = [Int.min, -1, 0, 1, Int.max]
        switch name {
        case "id":
            return .int(
                Bool.random(using: &random)
                    ? extremes.randomElement(using: &random)! : Int.random(in: -1000...1000, using: &random))
        case "name", "extra":
            return .text(
                ["", "a", "Zoë", String(repeating: "x", count: 300), "\u{1F600}"].randomElement(using: &random)!)
        case "amount":
            return .double(
                [0, -0.0, .infinity, -.infinity, .greatestFiniteMagnitude, 1.5].randomElement(using: &random)!)
        case "when":
            return .date(
                Date(timeIntervalSinceReferenceDate: Double(Int.random(in: -1_000_000...1_000_000, using: &random))))
        case "note":
            return Bool.random(using: &random) ? .null : .text("note")
        case "inner":
            return .nested(Inner(x: Int.random(in: -5...5, using: &random), y: Bool.random(using: &random) ? nil : "y"))
        default:
            return .list((0..<Int.random(in: 0...3, using: &random)).map { $0 })
        }
    }

    /// Records of the `Row` shape with fields shuffled and left out, and `Wide` records of up to
    /// sixteen fields, each decoded with the shared decoder and with one of its own.
    @Test func everyRecordDecodesAsWithADecoderOfItsOwn() throws {
        var random = SeededGenerator(label: "record-decoder-reuse")
        var spare: RecordDecoder?
        var reused = 0
        for _ in 0..<3_000 {
            if Bool.random(using: &random) {
                var entries = Self.names.filter { _ in Int.random(in: 0..<10, using: &random) > 0 }
                    .map { ($0, Self.value(for: $0, &random)) }
                entries.shuffle(using: &random)
                let bytes = try RecordCoder.encode(Fields(entries: entries))
                let alone = Outcome { try RecordCoder.decode(Row.self, from: bytes) }
                if spare != nil { reused += 1 }
                let shared = Outcome {
                    try bytes.withUnsafeBytes { try RecordCoder.decode(Row.self, from: $0, reusing: &spare) }
                }
                #expect(shared == alone, "\(entries.map(\.0))")
            } else {
                var entries = (0..<16).filter { _ in Bool.random(using: &random) }
                    .map { ("f\($0)", Fields.Value.int(Int.random(in: Int.min...Int.max, using: &random))) }
                entries.shuffle(using: &random)
                let bytes = try RecordCoder.encode(Fields(entries: entries))
                let alone = Outcome { try RecordCoder.decode(Wide.self, from: bytes) }
                let shared = Outcome {
                    try bytes.withUnsafeBytes { try RecordCoder.decode(Wide.self, from: $0, reusing: &spare) }
                }
                #expect(shared == alone, "\(entries.map(\.0))")
            }
        }
        #expect(reused > 1_000)
    }

    /// A value that is not a map, and bytes that are not a record, between maps.
    @Test func otherValuesAndDamagedBytesBetweenRows() throws {
        var spare: RecordDecoder?
        let row = Row(id: 1, name: "n", amount: 2, when: Date(timeIntervalSinceReferenceDate: 3))
        let rowBytes = try RecordCoder.encode(row)
        let numbers = try RecordCoder.encode([1, 2, 3])
        let damaged = Array(rowBytes.dropLast())
        #expect(try rowBytes.withUnsafeBytes { try RecordCoder.decode(Row.self, from: $0, reusing: &spare) } == row)
        #expect(
            try numbers.withUnsafeBytes { try RecordCoder.decode([Int].self, from: $0, reusing: &spare) } == [1, 2, 3])
        let alone = Outcome { try RecordCoder.decode(Row.self, from: damaged) }
        let shared = Outcome {
            try damaged.withUnsafeBytes { try RecordCoder.decode(Row.self, from: $0, reusing: &spare) }
        }
        #expect(shared == alone)
        #expect(alone != .value(row))
        #expect(try rowBytes.withUnsafeBytes { try RecordCoder.decode(Row.self, from: $0, reusing: &spare) } == row)
    }

    /// A type that keeps its decoder: the decoder is not handed to the next record, so what was
    /// kept still reads its own record.
    @Test func aKeptDecoderIsNotReused() throws {
        let first = try RecordCoder.encode(Inner(x: 1, y: "one"))
        let second = try RecordCoder.encode(Inner(x: 2, y: "two"))
        var spare: RecordDecoder?
        try first.withUnsafeBytes { firstBytes in
            let keeper = try RecordCoder.decode(Keeper.self, from: firstBytes, reusing: &spare)
            #expect(spare == nil)
            let next = try second.withUnsafeBytes { try RecordCoder.decode(Inner.self, from: $0, reusing: &spare) }
            #expect(next == Inner(x: 2, y: "two"))
            #expect(try keeper.decoder.container(keyedBy: Inner.CodingKeys.self).decode(Int.self, forKey: .x) == 1)
        }
    }

    struct Keeper: Decodable {
        let decoder: any Decoder

        init(from decoder: any Decoder) throws {
            self.decoder = decoder
            _ = try decoder.container(keyedBy: Inner.CodingKeys.self).decode(Int.self, forKey: .x)
        }
    }

    /// A value that keeps its decoder or a container reads a copy of its record of its own: the
    /// bytes it was decoded from are overwritten and freed after each decode, and every kept
    /// decoder and container still reads what it was given.
    @Test func whatAValueKeepsReadsItsOwnCopy() throws {
        var spare: RecordDecoder?
        var containers: [ContainerKeeper] = []
        var decoders: [Keeper] = []
        for x in 0..<40 {
            let encoded = try RecordCoder.encode(Inner(x: x, y: "\(x)"))
            let bytes = Self.stable(encoded)
            if x.isMultiple(of: 3) {
                decoders.append(
                    try RecordCoder.decode(Keeper.self, from: UnsafeRawBufferPointer(bytes), reusing: &spare))
            } else {
                containers.append(
                    try RecordCoder.decode(ContainerKeeper.self, from: UnsafeRawBufferPointer(bytes), reusing: &spare))
            }
            bytes.initializeMemory(as: UInt8.self, repeating: 0xAA)
            bytes.deallocate()
        }
        for keeper in containers {
            if let container = keeper.container {
                #expect(try container.decode(Int.self, forKey: .x) == keeper.x)
                #expect(try container.decode(String.self, forKey: .y) == "\(keeper.x)")
            }
        }
        #expect(containers.filter { $0.container != nil }.count == 13)
        for (index, keeper) in decoders.enumerated() {
            let container = try keeper.decoder.container(keyedBy: Inner.CodingKeys.self)
            #expect(try container.decode(Int.self, forKey: .x) == index * 3)
            #expect(try container.decode(String.self, forKey: .y) == "\(index * 3)")
        }
    }

    // MARK: - The root's kept keyed container

    /// The check that lets a root keep its keyed container holds on this toolchain: without it,
    /// every row of a fetch makes one anew (correct, but slower).
    @Test func theKeyedContainerIsOneReferenceToItsBox() {
        #expect(RecordDecoder.keyedContainerIsItsBox)
    }

    /// A model that keeps its keyed container: the container is not lent to the next record, so
    /// every kept container still reads its own record after all were decoded.
    @Test func aKeptContainerIsNotLentAgain() throws {
        let records = try (0..<50).map { try Self.stable(RecordCoder.encode(Inner(x: $0, y: "\($0)"))) }
        defer { records.forEach { $0.deallocate() } }
        var spare: RecordDecoder?
        var kept: [ContainerKeeper] = []
        for (index, bytes) in records.enumerated() {
            // Every other model lets go of its container, so that the decoder is kept for some.
            let keeper = try RecordCoder.decode(
                ContainerKeeper.self, from: UnsafeRawBufferPointer(bytes), reusing: &spare)
            #expect(keeper.x == index)
            kept.append(keeper)
        }
        for (index, keeper) in kept.enumerated() {
            if let container = keeper.container {
                #expect(try container.decode(Int.self, forKey: .x) == index)
                #expect(try container.decode(String.self, forKey: .y) == "\(index)")
            }
        }
        #expect(kept.filter { $0.container != nil }.count == 25)
    }

    struct ContainerKeeper: Decodable {
        let x: Int
        let container: KeyedDecodingContainer<Inner.CodingKeys>?

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: Inner.CodingKeys.self)
            x = try container.decode(Int.self, forKey: .x)
            self.container = x.isMultiple(of: 2) ? container : nil
        }
    }

    /// Models that ask for a second container while holding the first, for other keys, and of
    /// their own kind one level down, read with the shared decoder as with one of their own.
    @Test func containersHeldTogetherAndOtherKeys() throws {
        var random = SeededGenerator(label: "record-decoder-kept-containers")
        var spare: RecordDecoder?
        var reused = 0
        for _ in 0..<2_000 {
            let node = Self.node(depth: 0, &random)
            let bytes = try RecordCoder.encode(node)
            let alone = Outcome { try RecordCoder.decode(Node.self, from: bytes) }
            #expect(alone == .value(node))
            if spare != nil { reused += 1 }
            let shared = Outcome {
                try bytes.withUnsafeBytes { try RecordCoder.decode(Node.self, from: $0, reusing: &spare) }
            }
            #expect(shared == alone)
            let row = Row(id: node.value, name: "n", amount: 1, when: Date(timeIntervalSinceReferenceDate: 0))
            let rowBytes = try RecordCoder.encode(row)
            #expect(try rowBytes.withUnsafeBytes { try RecordCoder.decode(Row.self, from: $0, reusing: &spare) } == row)
        }
        #expect(reused > 1_000)
    }

    /// Reads `value` through one container and `children` through a second, made while the first
    /// is held, in an order chosen by the value; and its label through another key type.
    struct Node: Codable, Equatable {
        var value: Int
        var label: String
        var children: [Node]

        enum CodingKeys: String, CodingKey { case value, children, label }
        enum LabelKey: String, CodingKey { case label }

        init(value: Int, label: String, children: [Node]) {
            self.value = value
            self.label = label
            self.children = children
        }

        init(from decoder: any Decoder) throws {
            let first = try decoder.container(keyedBy: CodingKeys.self)
            if first.contains(.value), try first.decode(Int.self, forKey: .value).isMultiple(of: 2) {
                let second = try decoder.container(keyedBy: CodingKeys.self)
                children = try second.decode([Node].self, forKey: .children)
                value = try first.decode(Int.self, forKey: .value)
            } else {
                value = try first.decode(Int.self, forKey: .value)
                children = try decoder.container(keyedBy: CodingKeys.self).decode([Node].self, forKey: .children)
            }
            label = try decoder.container(keyedBy: LabelKey.self).decode(String.self, forKey: .label)
        }
    }

    static func node(depth: Int, _ random: inout SeededGenerator) -> Node {
        let children =
            depth < 2 ? (0..<Int.random(in: 0...2, using: &random)).map { _ in node(depth: depth + 1, &random) } : []
        return Node(value: Int.random(in: Int.min...Int.max, using: &random), label: "d\(depth)", children: children)
    }

    /// Nothing is left holding itself once a fetch's decoder is dropped: not the decoder and the
    /// container it keeps, nor a model's kept container.
    @Test func nothingOutlivesItsLastHolder() throws {
        let records = try (0..<10).map { try Self.stable(RecordCoder.encode(Inner(x: $0, y: nil))) }
        defer { records.forEach { $0.deallocate() } }
        weak var decoder: RecordDecoder?
        do {
            var spare: RecordDecoder?
            for bytes in records {
                _ = try RecordCoder.decode(Inner.self, from: UnsafeRawBufferPointer(bytes), reusing: &spare)
            }
            #expect(spare != nil)
            decoder = spare
        }
        #expect(decoder == nil)
        weak var keptDecoder: RecordDecoder?
        do {
            var spare: RecordDecoder?
            var kept: ContainerKeeper?
            for bytes in records {
                let keeper = try RecordCoder.decode(
                    ContainerKeeper.self, from: UnsafeRawBufferPointer(bytes), reusing: &spare)
                if keeper.x == 4 { kept = keeper }
            }
            let decoderKeeper = try RecordCoder.decode(
                Keeper.self, from: UnsafeRawBufferPointer(records[6]), reusing: &spare)
            keptDecoder = decoderKeeper.decoder as? RecordDecoder
            #expect(keptDecoder != nil)
            #expect(try kept?.container?.decode(Int.self, forKey: .x) == 4)
            let again = try decoderKeeper.decoder.container(keyedBy: Inner.CodingKeys.self)
            #expect(try again.decode(Int.self, forKey: .x) == 6)
        }
        #expect(keptDecoder == nil)
    }

    /// A copy of `bytes` at an address that stays valid until deallocated.
    static func stable(_ bytes: [UInt8]) -> UnsafeMutableRawBufferPointer {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: bytes.count, alignment: 8)
        bytes.withUnsafeBytes { copy.copyMemory(from: $0) }
        return copy
    }
}
