import Foundation
import Rill
import RillStorage

/// Opens an existing store for the CLI (never creates one). A command that only reads says so,
/// and can then read a store the process may not write (see `Environment`).
func openStore(_ path: String, readOnly: Bool = false) throws -> Store {
    try Store(
        directory: path, options: EnvironmentOptions(readOnly: readOnly), create: false,
        progress: StoreProgressBar.handlerIfTerminal())
}
