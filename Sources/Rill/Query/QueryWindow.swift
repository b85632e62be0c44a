/// Which slice of ordered results a query keeps: `offset` rows skipped, then at most `limit`
/// (nil: all the rest). Negative values count as zero, and sums saturate instead of overflowing,
/// so any window given by a caller is safe to compute with.
struct QueryWindow: Hashable, Sendable {
    /// How many rows are skipped.
    let offset: Int
    /// How many rows are kept after them; nil for all.
    let limit: Int?

    init(offset: Int?, limit: Int?) {
        self.offset = max(offset ?? 0, 0)
        self.limit = limit.map { max($0, 0) }
    }

    /// One past the last row kept, counted from the first result (`Int.max` when that overflows);
    /// nil without a limit.
    var end: Int? {
        limit.map { limit in
            let (end, overflow) = offset.addingReportingOverflow(limit)
            return overflow ? .max : end
        }
    }

    /// Whether the window keeps no row at all.
    var isEmpty: Bool { limit == 0 }

    /// The positions kept out of `count` ordered results.
    func range(in count: Int) -> Range<Int> {
        let lower = min(offset, count)
        return lower..<min(count, end ?? .max)
    }

    /// Whether the window keeps another row once it holds `kept` rows (those past the offset).
    func keepsMore(afterKeeping kept: Int) -> Bool { limit.map { kept < $0 } ?? true }

    /// Whether the window keeps every row: no offset, no limit.
    var keepsEverything: Bool { offset == 0 && limit == nil }

    /// `extra` rows past the window's end (`Int.max` when that overflows); nil without a limit.
    func end(plus extra: Int) -> Int? {
        end.map { end in
            let (sum, overflow) = end.addingReportingOverflow(extra)
            return overflow ? .max : sum
        }
    }

    /// The offset within the window of the result at `position`; nil when the window does not
    /// keep it.
    func offset(ofPosition position: Int) -> Int? {
        guard position >= offset, position < (end ?? .max) else { return nil }
        return position - offset
    }

    /// The positions of the first and the last `width` results the window keeps out of `count`
    /// (each once; only the first ones without a limit).
    func edgePositions(in count: Int, width: Int) -> [Int] {
        let kept = range(in: count)
        guard !kept.isEmpty else { return [] }
        var positions = Array(kept.lowerBound..<min(kept.lowerBound + width, kept.upperBound))
        if limit != nil {
            positions += Array(
                max(kept.upperBound - width, positions.last.map { $0 + 1 } ?? kept.lowerBound)..<kept.upperBound)
        }
        return positions
    }
}
