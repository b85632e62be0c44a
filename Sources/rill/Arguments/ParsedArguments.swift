/// A command line that matched a `CommandDescription`.
struct ParsedArguments: Sendable {
    var positionals: [String] = []
    var values: [String: String] = [:]
    var flags: Set<String> = []
    var wantsHelp = false

    func value(_ option: String) -> String? { values[option] }

    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// The option's value as a whole number in `range`, or nil when the option is absent.
    func integer(_ option: String, in range: ClosedRange<Int> = 0...Int.max) throws -> Int? {
        guard let text = values[option] else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError(
                "--\(option) takes a whole number from \(range.lowerBound) to \(range.upperBound); got '\(text)'")
        }
        return number
    }
}
