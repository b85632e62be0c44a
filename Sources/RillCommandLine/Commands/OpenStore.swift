import Foundation
import Rill

/// Opens an existing store for the CLI (never creates one unless told). A command that only reads says so,
/// and can then read a store the process may not write (see `StoreOptions.readOnly`).
///
/// The daemon of a replicated log's node gives the log (`replica`), and may create the store.
func openStore(
    _ path: String, readOnly: Bool = false, creating: Bool = false, replica: (any LogReplica)? = nil
) throws -> Store {
    try Store(
        directory: path, options: StoreOptions(readOnly: readOnly), create: creating,
        progress: StoreProgressBar.handlerIfTerminal(), replica: replica)
}
