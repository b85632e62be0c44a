import Foundation
import Rill

/// An option with a value, as a command's options declare it: its line in the help, and how the
/// text given becomes a `Value` — or the usage error that says why it cannot.
///
/// For example, `rill log --limit`:
///
///     static let limit = ValueOption.wholeNumber("limit", valueName: "n", help: "Print at most this many commits.")
struct ValueOption<Value>: Sendable {
    var name: String
    var valueName: String
    var help: String
    /// Throws `UsageError` for a text the option does not take.
    var decode: @Sendable (String) throws -> Value
    /// What a shell offers for the value (`rill completions`).
    var completion: CompletionHint = .none

    init(_ name: String, valueName: String, help: String, decode: @escaping @Sendable (String) throws -> Value) {
        self.name = name
        self.valueName = valueName
        self.help = help
        self.decode = decode
    }

    /// The option as the help lists it.
    var option: CommandDescription.Option {
        .init(name: name, valueName: valueName, help: help, completion: completion)
    }

    /// The option, with shells offering what `hint` names for its value.
    func completing(_ hint: CompletionHint) -> Self {
        var option = self
        option.completion = hint
        return option
    }
}

extension ValueOption where Value == String {
    /// An option whose value is the text given, as it is.
    init(_ name: String, valueName: String, help: String) {
        self.init(name, valueName: valueName, help: help) { $0 }
    }
}

extension ValueOption where Value == Int {
    /// An option whose value is a whole number in `range`.
    static func wholeNumber(
        _ name: String, valueName: String, help: String, in range: ClosedRange<Int> = 0...Int.max
    ) -> Self {
        Self(name, valueName: valueName, help: help) { text in
            guard let number = Int(text), range.contains(number) else {
                throw UsageError(
                    "--\(name) takes a whole number from \(range.lowerBound) to \(range.upperBound); got '\(text)'")
            }
            return number
        }
    }
}

extension ValueOption where Value == Double {
    /// An option whose value is a number of seconds (fractions allowed) above 0, at most a day;
    /// `orZero`: 0 too, for an option where 0 means never.
    static func seconds(_ name: String, valueName: String, help: String, orZero: Bool = false) -> Self {
        Self(name, valueName: valueName, help: help) { text in
            guard let seconds = Double(text), seconds > 0 || (orZero && seconds == 0), seconds <= 86_400 else {
                let lowest = orZero ? "0 (never) or above" : "above 0"
                throw UsageError("--\(name) takes a number of seconds \(lowest), at most 86400; got '\(text)'")
            }
            return seconds
        }
    }
}

extension ValueOption where Value == LogPosition {
    /// An option whose value is a commit's sequence number or an ISO-8601 date.
    static func logPosition(_ name: String, help: String) -> Self {
        Self(name, valueName: "seq|date", help: help) { text in
            guard let position = LogPosition(parsing: text) else {
                throw UsageError("--\(name) takes \(LogPosition.expected); got '\(text)'")
            }
            return position
        }
    }
}

extension ValueOption where Value == Set<String> {
    /// An option whose value is a comma-separated list of names, none empty.
    static func names(_ name: String, valueName: String, help: String) -> Self {
        Self(name, valueName: valueName, help: help) { text in
            guard let names = HistoryDescriptor.names(parsing: text) else {
                throw UsageError("--\(name) takes names separated by commas, none empty; got '\(text)'")
            }
            return names
        }
    }
}
