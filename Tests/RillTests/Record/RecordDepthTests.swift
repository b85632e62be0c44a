import Foundation
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
        let outcome = OutcomeBox()
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
                outcome.set(differences.isEmpty ? nil : "differs: " + differences.joined(separator: ", "))
            } catch {
                outcome.set("\(error)")
            }
        }
        #expect(outcome.value == nil)
    }

    @Test func oneLevelDeeperIsRefused() {
        let bytes = Self.nested(RecordFormat.maxDepth + 1).recordBytes()
        let outcome = OutcomeBox()
        Self.onThread(stackSize: 1 << 20) {
            do {
                _ = try bytes.withUnsafeBytes { try RecordValue(record: $0) }
                outcome.set("read")
            } catch let error as RecordError {
                outcome.set(error.code == .nestingTooDeep ? "refused" : "\(error)")
            } catch {
                outcome.set("an untyped error: \(error)")
            }
        }
        #expect(outcome.value == "refused")
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

/// A result handed from another thread.
private final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: String?

    var value: String? { lock.withLock { stored } }
    func set(_ value: String?) { lock.withLock { stored = value } }
}
