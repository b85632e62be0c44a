/// `rill completions`: prints a shell's completion script, generated from the command
/// descriptions, so that a command's arguments and options complete as its help lists them.
struct CompletionsCommand: Command {
    let description = CommandDescription(
        name: "completions",
        abstract: "Print a completion script for bash, zsh or fish.",
        arguments: CompletionsOptions.arguments,
        options: CompletionsOptions.options,
        discussion: """
            The script completes the commands, each command's options and the values they take
            (directories for a store, files for a path, the choices of a choice). Install it:
              bash  rill completions bash > ~/.local/share/bash-completion/completions/rill
                    (or, for the current shell: source <(rill completions bash))
              zsh   rill completions zsh > ~/.zfunc/_rill
                    (with fpath+=(~/.zfunc) before compinit in ~/.zshrc)
              fish  rill completions fish > ~/.config/fish/completions/rill.fish
            Write it again after upgrading rill: it lists the options of the rill that wrote it.
            """,
        examples: [
            "rill completions bash > ~/.local/share/bash-completion/completions/rill",
            "rill completions zsh > ~/.zfunc/_rill",
            "rill completions fish > ~/.config/fish/completions/rill.fish",
        ]
    )

    func run(_ options: CompletionsOptions, output: inout Output) throws -> Int32 {
        output.write(options.shell.script(for: Commands.all.map(\.description)))
        return ExitStatus.success
    }
}
