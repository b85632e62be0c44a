import Rill

/// `rill backup`: a consistent copy of a store while its writers go on.
struct BackupCommand: Command {
    let description = CommandDescription(
        name: "backup",
        abstract: "Copy a store while writers run; print {\"seq\":N}, the last commit the copy holds.",
        arguments: BackupOptions.arguments,
        options: BackupOptions.options,
        discussion: """
            The copy is LMDB's compacting copy, taken in a read transaction of its own: it is the
            store as of one commit, and writers in other processes go on meanwhile. Free pages are
            left out, so the copy can be smaller than the store. The destination must not exist
            (its parent must) or be an empty directory; a store there is never overwritten. The
            copy is written under a hidden name, flushed, then put in place, so an interrupted
            backup leaves no data.mdb. The copy passes rill check; rill restore brings it back.

            A destination whose name ends in .mdb (and that does not exist) is one file instead of
            a directory: the store's data.mdb alone, written under a hidden staging directory
            beside it and linked to that name, never over a file. rill restore takes such a file
            as well as a directory.
            """,
        examples: [
            "rill backup ./books /backups/books-2026-01-01"
        ]
    )

    func run(_ options: BackupOptions, output: inout Output) throws -> Int32 {
        let store = try openStore(options.store, readOnly: true)
        let sequence = try store.backup(to: options.destination)
        output.line(RecordValue.map([RecordField(name: "seq", value: .int(Int64(sequence)))]).jsonString())
        return ExitStatus.success
    }
}
