import Rill

/// `rill restore`: a backup back as a store.
struct RestoreCommand: Command {
    let description = CommandDescription(
        name: "restore",
        abstract: "Check a backup, then copy it to a new store; print {\"seq\":N}, its last commit.",
        arguments: RestoreOptions.arguments,
        options: RestoreOptions.options,
        discussion: """
            The backup must pass rill check first. The store path must not exist (its parent
            must) or be an empty directory: a restore never replaces a store, which a process may
            have open. To replace one, stop every process that uses it, move it aside, restore to
            its path, then remove the old one. The copy is written under a hidden name, flushed,
            then put in place, so an interrupted restore leaves no store.
            """,
        examples: [
            "rill restore /backups/books-2026-01-01 ./books-restored"
        ]
    )

    func run(_ options: RestoreOptions, output: inout Output) throws -> Int32 {
        let sequence = try Store.restore(backup: options.backup, to: options.store)
        output.line(RecordValue.map([RecordField(name: "seq", value: .int(Int64(sequence)))]).jsonString())
        return ExitStatus.success
    }
}
