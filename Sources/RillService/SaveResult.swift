/// What a save answers: the sequence of its commit, `{"seq":N}`, or `{"seq":null}` when it
/// changed nothing (Documentation/Protocol.md, "Saves").
package struct SaveResult: Sendable, Equatable {
    /// The commit's sequence; nil when nothing changed.
    package var sequence: UInt64?

    /// The answer of a save that made commit `sequence` (nil: none).
    package init(sequence: UInt64?) { self.sequence = sequence }

    /// `{"seq":N}` or `{"seq":null}`.
    package var json: String { #"{"seq":\#(sequence.map { String($0) } ?? "null")}"# }
}
