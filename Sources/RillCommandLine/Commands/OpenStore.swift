import Foundation
import Rill

/// Opens an existing store for the CLI (never creates one). A command that only reads says so,
/// and can then read a store the process may not write (see `StoreOptions.readOnly`).
func openStore(_ path: String, readOnly: Bool = false) throws -> Store {
    try Store(
        directory: path, options: StoreOptions(readOnly: readOnly), create: false,
        progress: StoreProgressBar.handlerIfTerminal())
}
