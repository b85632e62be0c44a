import Rill

/// What `rill compact` is given.
struct CompactOptions: CommandOptions {
    static let store = CommandDescription.Argument.store
    static let before = ValueOption.logPosition(
        "before", help: "Fold the commits before this one (or made before this date) into the snapshot.")
    static let keepFile = Flag(
        "keep-file", help: "Do not shrink data.mdb afterwards (its free pages are reused by later saves).")
    static let json = Flag("json", help: "Print what was done as JSON.")

    static let arguments = [store]
    static let options = [before.option, keepFile.option, json.option]

    /// The store directory.
    var store: String
    /// The first commit kept, or a date: commits made before it are folded.
    var before: LogPosition
    /// Leave the file's size alone.
    var keepFile: Bool
    /// The summary as JSON, not text.
    var json: Bool

    init(_ arguments: ParsedArguments) throws {
        store = arguments[Self.store]
        guard let before = try arguments[Self.before] else {
            throw UsageError("rill compact needs --before <seq|date>: the first commit to keep, or a date")
        }
        self.before = before
        keepFile = arguments[Self.keepFile]
        json = arguments[Self.json]
    }
}
