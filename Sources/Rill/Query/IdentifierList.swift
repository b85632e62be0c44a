/// Identifier keys held one after another in one buffer, with where each ends: a walk's list of
/// records to hand on, filled and emptied over and over without an allocation for each key.
struct IdentifierList {
    /// The identifiers' bytes, one after another.
    private(set) var bytes: [UInt8] = []
    /// Where each identifier ends in `bytes`.
    private(set) var ends: [Int] = []

    var count: Int { ends.count }

    var isEmpty: Bool { ends.isEmpty }

    mutating func append(_ id: UnsafeRawBufferPointer) {
        // As typed bytes: copied at once, not byte by byte through a generic sequence.
        bytes.append(contentsOf: id.assumingMemoryBound(to: UInt8.self))
        ends.append(bytes.count)
    }

    /// Empties the list, keeping its buffers.
    mutating func removeAll() {
        bytes.removeAll(keepingCapacity: true)
        ends.removeAll(keepingCapacity: true)
    }

    /// The identifiers as arrays.
    func arrays() -> [[UInt8]] {
        ends.indices.map { Array(bytes[start(of: $0)..<ends[$0]]) }
    }

    private func start(of index: Int) -> Int { index == 0 ? 0 : ends[index - 1] }

    /// Identifier `index` of a list's buffers (see `withBuffers`).
    static func identifier(
        _ index: Int, in bytes: UnsafeRawBufferPointer, ends: UnsafeBufferPointer<Int>
    ) -> UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(rebasing: bytes[(index == 0 ? 0 : ends[index - 1])..<ends[index]])
    }

    /// Calls `body` with the first identifier; the list must not be empty.
    func withFirst<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[..<ends[0]])) }
    }

    /// Calls `body` with the identifiers' bytes and where each ends.
    func withBuffers<R>(_ body: (UnsafeRawBufferPointer, UnsafeBufferPointer<Int>) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes { all in try ends.withUnsafeBufferPointer { ends in try body(all, ends) } }
    }

    /// Calls `body` with each identifier, in the list's order or, when `sorted`, in ascending
    /// order of its bytes, until it returns false; false then.
    func forEach(sorted: Bool = false, _ body: (UnsafeRawBufferPointer) throws -> Bool) throws -> Bool {
        try withBuffers { all, ends in
            func id(_ index: Int) -> UnsafeRawBufferPointer { Self.identifier(index, in: all, ends: ends) }
            if sorted, ends.count > 1 {
                for index in ends.indices.sorted(by: { id($0).lexicographicallyPrecedes(id($1)) }) {
                    guard try body(id(index)) else { return false }
                }
                return true
            }
            for index in ends.indices {
                guard try body(id(index)) else { return false }
            }
            return true
        }
    }
}
