import Foundation

/// The screen tests of an entity's queries side by side, by ascending query number, as of a
/// generation of the entity's field table (made anew when a query comes, goes or changes), with
/// an index of those that bound one field's number.
struct ScreenTests {
    var generation: Int
    var ids: ContiguousArray<Int32>
    var tests: ContiguousArray<ScreenTest>
    /// Nil until `use()` made it, and when too few tests bound a number of one field for an
    /// index to pay.
    private(set) var index: ScreenRangeIndex?
    /// How many changes these tests screened.
    private var uses = 0

    /// The changes tests screen by a sweep before their index is made: making it costs about as
    /// much as a few sweeps of a thousand tests, and a follower whose queries come and go at
    /// every commit would make it for each.
    static let usesBeforeIndex = 8

    init(generation: Int, ids: ContiguousArray<Int32>, tests: ContiguousArray<ScreenTest>) {
        self.generation = generation
        self.ids = ids
        self.tests = tests
    }

    /// Counts a change screened; returns true when that changed these tests (the count, or the
    /// index made at last), which the caller then keeps.
    mutating func use() -> Bool {
        guard uses < Self.usesBeforeIndex else { return false }
        uses += 1
        if uses == Self.usesBeforeIndex { index = ScreenRangeIndex(tests.map { $0.conditions }) }
        return true
    }

    /// Calls `body` with the position of each test that may admit `change`, in ascending order:
    /// every test but those the index rules out by the value of its field.
    ///
    /// A test is ruled out only when one of its conditions on that field cannot hold for the
    /// value; the caller runs the others' tests in full. When the field cannot be read, no test
    /// is ruled out: each then meets the error itself.
    func forEachCandidate(of change: DecodedChange, _ body: (Int) -> Void) {
        guard let index, let value = try? change.unsharedField(slot: index.slot) else {
            for position in tests.indices { body(position) }
            return
        }
        index.forEachCandidate(for: value, body)
    }
}

/// The tests of an entity's screens that compare one top-level field with numbers, by the
/// stretch of numbers their comparisons let through.
///
/// The numbers the tests compare the field with, sorted, cut the numbers into cells: each of
/// them, and each open stretch before, between and after them. Every comparison (`<`, `<=`,
/// `>`, `>=`, `==`) of a field's value with one of them has the same answer all through a cell,
/// and the comparisons of a test together let through a run of cells. So the tests that may
/// admit a value are those whose run holds the value's cell, found by a binary search: the
/// follower sweeps a few tests rather than all. Numbers compare exactly (`Number.compare`, a
/// total order without NaN), so a value's cell is that of its place among them.
///
/// The runs are kept in a segment tree over the cells: each run in the few nodes that cover it
/// exactly (at most two a level), so that wide runs cost no more room than narrow ones, and the
/// runs holding a cell are those of the nodes from its leaf to the root.
///
/// A value that is no number, or NaN, or absent, fails every such comparison: only the tests
/// outside the index may admit it.
struct ScreenRangeIndex {
    /// The field's slot in its entity's `FieldTable`.
    let slot: Int
    /// The numbers, ascending, each once.
    private let bounds: [Number]
    /// The cells (2 × `bounds.count` + 1: the stretch below the first number, the number, the
    /// stretch after it, …) rounded up to a power of two: the tree's leaves.
    private let leaves: Int
    /// The tree's nodes (node 1 the root, node `n`'s children `2n` and `2n + 1`, leaf `c` node
    /// `leaves + c`), each with the positions of the tests whose run it covers, ascending.
    private let nodes: [[Int32]]
    /// The positions of the tests outside the index, ascending.
    private let unindexed: [Int32]

    /// Fewer tests than this on a field are swept.
    static let minimumTests = 8

    /// An index of `conditions`, the conditions of each test in order; nil when fewer than
    /// `minimumTests` bound one field's number, or when their runs would hold more than 64
    /// entries a test.
    init?(_ conditions: [[ScreenTest.Condition]]) {
        // The field most tests compare with a number.
        var counts: [Int: Int] = [:]
        for test in conditions {
            let slots = Set(test.compactMap { condition in Self.bound(condition).map { _ in condition.slot } })
            for slot in slots { counts[slot, default: 0] += 1 }
        }
        guard let (slot, count) = counts.max(by: { ($0.value, -$0.key) < ($1.value, -$1.key) }),
            count >= Self.minimumTests
        else { return nil }
        var numbers: [Number] = []
        for test in conditions {
            for condition in test where condition.slot == slot {
                if let (_, number) = Self.bound(condition) { numbers.append(number) }
            }
        }
        numbers.sort { Number.compare($0, $1) == .orderedAscending }
        var bounds: [Number] = []
        for number in numbers where bounds.last.map({ Number.compare($0, number) != .orderedSame }) ?? true {
            bounds.append(number)
        }
        let cellCount = 2 * bounds.count + 1
        var leaves = 1
        while leaves < cellCount { leaves *= 2 }
        var nodes = Array(repeating: [Int32](), count: 2 * leaves)
        var unindexed: [Int32] = []
        var entries = 0
        for (position, test) in conditions.enumerated() {
            let own = test.compactMap { $0.slot == slot ? Self.bound($0) : nil }
            guard !own.isEmpty else {
                unindexed.append(Int32(position))
                continue
            }
            var lowest = 0
            var highest = cellCount - 1
            for (comparison, number) in own {
                let cell = 2 * Self.place(of: number, in: bounds).below + 1
                switch comparison {
                case .less: highest = min(highest, cell - 1)
                case .lessOrEqual: highest = min(highest, cell)
                case .greater: lowest = max(lowest, cell + 1)
                case .greaterOrEqual: lowest = max(lowest, cell)
                case .equal: (lowest, highest) = (max(lowest, cell), min(highest, cell))
                case .notEqual: preconditionFailure("not a bound")
                }
            }
            // An empty run: no number passes, and nothing else does either.
            guard lowest <= highest else { continue }
            // The nodes that cover cells lowest through highest exactly, bottom up.
            var left = lowest + leaves
            var right = highest + leaves + 1
            while left < right {
                if left & 1 == 1 {
                    nodes[left].append(Int32(position))
                    left += 1
                    entries += 1
                }
                if right & 1 == 1 {
                    right -= 1
                    nodes[right].append(Int32(position))
                    entries += 1
                }
                left /= 2
                right /= 2
            }
            guard entries <= 64 * conditions.count else { return nil }
        }
        self.slot = slot
        self.bounds = bounds
        self.leaves = leaves
        self.nodes = nodes
        self.unindexed = unindexed
    }

    /// The comparison and number of `condition` when it bounds its field's number: a comparison
    /// other than `!=` with a number that is not NaN.
    private static func bound(_ condition: ScreenTest.Condition) -> (QueryComparison, Number)? {
        guard condition.comparison != .notEqual, let number = orderedNumber(condition.constant) else { return nil }
        return (condition.comparison, number)
    }

    /// `value` as a number that has a place among the others: nil for NaN and for what is no number.
    private static func orderedNumber(_ value: RecordValue) -> Number? {
        guard let number = Number(value), Number.compare(number, number) != nil else { return nil }
        return number
    }

    /// How many of `bounds` are below `number`, and whether the next one equals it.
    private static func place(of number: Number, in bounds: [Number]) -> (below: Int, equal: Bool) {
        var low = 0
        var high = bounds.count
        while low < high {
            let middle = (low + high) / 2
            if Number.compare(bounds[middle], number) == .orderedAscending { low = middle + 1 } else { high = middle }
        }
        return (low, low < bounds.count && Number.compare(bounds[low], number) == .orderedSame)
    }

    /// Calls `body` with the position of each test that may admit a record whose field has
    /// `value`, ascending.
    func forEachCandidate(for value: RecordValue, _ body: (Int) -> Void) {
        var indexed: [Int32] = []
        if let number = Self.orderedNumber(value) {
            let (below, equal) = Self.place(of: number, in: bounds)
            // Each test's run is in one node on the path at most: the path's lists, together.
            var node = leaves + 2 * below + (equal ? 1 : 0)
            var lists = 0
            while node >= 1 {
                if !nodes[node].isEmpty {
                    indexed += nodes[node]
                    lists += 1
                }
                node /= 2
            }
            if lists > 1 { indexed.sort() }
        }
        // The two ascending lists, merged.
        var next = 0
        for position in unindexed {
            while next < indexed.count, indexed[next] < position {
                body(Int(indexed[next]))
                next += 1
            }
            body(Int(position))
        }
        while next < indexed.count {
            body(Int(indexed[next]))
            next += 1
        }
    }
}
