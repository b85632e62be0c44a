import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A program in a pseudo-terminal: a tmux server of its own (its socket in a directory of the
/// test's, no user configuration, no status line, panes kept after their program ends), one
/// window of a given size running `command`. The screen is read with `capture-pane`; keys go in
/// with `send-keys`. The server is killed when the value goes.
package final class TmuxSession {
    /// Why tmux cannot run here: a test that needs it skips, saying so.
    package struct Unavailable: Error, CustomStringConvertible {
        package var description: String

        package init(description: String) { self.description = description }
    }

    private let tmux: String
    private let socket: String
    /// The client that started the server: it ends when the server does.
    private var client: Process?
    /// The server's process, killed at the end whether or not `kill-server` reached it.
    private var serverPID: pid_t = 0

    /// tmux on the `PATH`, or nil.
    package static func executable() -> String? {
        let directories = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        return directories.map { "\($0)/tmux" }.first { access($0, X_OK) == 0 }
    }

    /// Starts `command` (run as it is, no shell) in a `width` × `height` window; `directory`
    /// holds the server's socket and configuration.
    package init(_ command: [String], width: Int, height: Int, directory: String) throws {
        guard let tmux = Self.executable() else { throw Unavailable(description: "tmux is not installed") }
        self.tmux = tmux
        socket = directory + "/tmux.sock"
        let configuration = directory + "/tmux.conf"
        try "set -g status off\nset -g remain-on-exit on\nset -g history-limit 0\n".write(
            toFile: configuration, atomically: true, encoding: .utf8)
        // The server this starts keeps the descriptors it was given, Foundation's watch of the
        // client's end among them: no pipes here, and the session is awaited, not the client.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tmux)
        process.arguments =
            ["-S", socket, "-f", configuration, "new-session", "-d", "-s", "test", "-x", "\(width)", "-y", "\(height)"]
            + command
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while (try Self.run(tmux, ["-S", socket, "has-session", "-t", "test"])).status != 0 {
            guard Date() < deadline else { throw Unavailable(description: "tmux new-session started no session") }
            usleep(20_000)
        }
        client = process
        serverPID = pid_t(format("#{pid}")) ?? 0
    }

    deinit { stop() }

    /// Kills the server and the program with it.
    package func stop() {
        _ = try? Self.run(tmux, ["-S", socket, "kill-server"])
        if serverPID > 0 {
            kill(serverPID, SIGKILL)
            serverPID = 0
        }
    }

    // MARK: - The screen

    /// The pane's lines as shown, each without its trailing blanks.
    package func screen() -> [String] {
        let text = (try? Self.run(tmux, ["-S", socket, "capture-pane", "-p", "-t", "test"]).output) ?? ""
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            var line = String(line)
            while line.last == " " { line.removeLast() }
            return line
        }
        if lines.last == "" { lines.removeLast() }
        return lines
    }

    /// A pane format's value (`#{pane_pid}`, `#{alternate_on}`, `#{pane_dead_status}`…).
    package func format(_ format: String) -> String {
        let output = (try? Self.run(tmux, ["-S", socket, "display-message", "-p", "-t", "test", format]).output) ?? ""
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Types `keys` (tmux key names: `q`, `Space`, `C-c`, `NPage`…).
    package func send(_ keys: String...) {
        _ = try? Self.run(tmux, ["-S", socket, "send-keys", "-t", "test"] + keys)
    }

    /// Makes the window `width` × `height`: the program gets SIGWINCH.
    package func resize(width: Int, height: Int) {
        _ = try? Self.run(tmux, ["-S", socket, "resize-window", "-t", "test", "-x", "\(width)", "-y", "\(height)"])
    }

    /// Waits (up to 30 s) until `condition` holds for the screen; the last screen seen, and
    /// whether it held.
    package func wait(until condition: ([String]) -> Bool) -> (held: Bool, screen: [String]) {
        let deadline = Date().addingTimeInterval(30)
        var screen = self.screen()
        while !condition(screen), Date() < deadline {
            usleep(20_000)
            screen = self.screen()
        }
        return (condition(screen), screen)
    }

    /// Waits (up to 30 s) until a pane format has `value`.
    package func wait(for format: String, toBe value: String) -> Bool {
        let deadline = Date().addingTimeInterval(30)
        while self.format(format) != value, Date() < deadline { usleep(20_000) }
        return self.format(format) == value
    }

    private static func run(_ executable: String, _ arguments: [String]) throws -> ProcessRun {
        try runProgram(URL(fileURLWithPath: executable), arguments)
    }
}
