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
}
