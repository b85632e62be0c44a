/// The arithmetic of an open-addressing table searched by linear probing over any number of
/// slots (`KeyedObjects`, `HolderIndex`): a key's home slot is its hash's high bits scaled to the
/// number of slots (a multiplication, not a division), and a search wraps from the last slot to
/// the first.
struct LinearProbing {
    /// The number of slots.
    var capacity = 0

    /// The slot where the search for a key of hash `hash` starts.
    @inline(__always)
    func home(_ hash: UInt64) -> Int {
        Int(truncatingIfNeeded: hash.multipliedFullWidth(by: UInt64(capacity)).high)
    }

    /// The slot after `slot`, the first after the last.
    @inline(__always)
    func next(_ slot: Int) -> Int {
        slot &+ 1 == capacity ? 0 : slot &+ 1
    }

    /// How many slots a search passes from `start` to reach `slot`.
    @inline(__always)
    func distance(from start: Int, to slot: Int) -> Int {
        slot >= start ? slot &- start : slot &+ capacity &- start
    }

    /// As few slots as hold `count` keys at most three-quarters full (and at least 16).
    static func slots(for count: Int) -> Int {
        max(16, (count * 4 + 2) / 3)
    }
}
