/// An option without a value, as a command's options declare it: its line in the help; given or
/// not, it decodes to a `Bool`.
struct Flag: Sendable {
    var name: String
    var help: String

    init(_ name: String, help: String) {
        self.name = name
        self.help = help
    }

    /// The flag as the help lists it.
    var option: CommandDescription.Option { .init(name: name, help: help) }
}
