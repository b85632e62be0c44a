/// What a save answers: the sequence of its commit, `{"seq":N}`, or `{"seq":null}` when it
/// changed nothing (Documentation/Protocol.md, "Saves").
package struct SaveResult: Sendable, Equatable {
    /// The commit's sequence; nil when nothing changed.
    package var sequence: UInt64?
    /// The changes its commit holds (records written), 0 when nothing changed; not sent.
    package var changeCount: Int

    /// The answer of a save that made commit `sequence` (nil: none) of `changeCount` changes.
    package init(sequence: UInt64?, changeCount: Int = 0) {
        self.sequence = sequence
        self.changeCount = changeCount
    }

    /// `{"seq":N}` or `{"seq":null}`.
    package var json: String { #"{"seq":\#(sequence.map { String($0) } ?? "null")}"# }
}
