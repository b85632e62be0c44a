import Foundation
import Rill

/// One `rill` subcommand.
protocol Command: Sendable {
    var description: CommandDescription { get }
    /// Runs the command; returns the exit status.
    func run(_ arguments: ParsedArguments, output: inout Output) throws -> Int32
}
