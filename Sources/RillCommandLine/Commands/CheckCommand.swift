import Foundation
import Rill

/// `rill check`: the store against a replay of its log.
struct CheckCommand: Command {
    let description = CommandDescription(
        name: "check",
        abstract: "Verify that the records and indexes equal a replay of the log; exit 1 with a report when not.",
        arguments: CheckOptions.arguments,
        options: CheckOptions.options,
        discussion: """
            Replays every commit from the first, in one snapshot, and compares the result with
            every entity's records and every index; also checks that the log has no gap and
            every entry reads, and holds every record to its entity's current schema (rill
            schema) or, for an entity made by rill import, to the field kinds its description
            declared. Last it reads the storage's list of free pages, which every write takes
            pages from and no read meets: when it is damaged, writes fail while reads work.
            Holds the replayed records in memory.

            The check runs in a child process of its own: a file damaged badly enough to stop
            LMDB (a failed assertion, a page read past the end of the file) is reported as a
            problem, not as a crash of rill.

            With --json the report is one JSON object on standard output, always: {"healthy":
            true|false, "commits", "records", "indexKeys", "problems": [...], "unreported"}, or,
            when the store cannot be read at all (missing, cut short, damaged), {"healthy":false,
            "problems":[<why>]}, the message also on standard error. Exit 0 when healthy, else 1.
            """,
        examples: [
            "rill check ./books",
            "rill check --json ./books",
        ]
    )

    /// Set in the child that does the checking.
    static let childVariable = "RILL_CHECK_CHILD"

    func run(_ options: CheckOptions, output: inout Output) throws -> Int32 {
        guard ProcessInfo.processInfo.environment[Self.childVariable] != nil else {
            return try runApart(options, output: &output)
        }
        let report: StoreCheckReport
        do {
            report = try openStore(options.store, readOnly: true).check()
        } catch {
            // A monitor parses standard output: a store that cannot be read is reported there
            // too, not only on standard error. The error still ends the command (status 1).
            if options.json {
                output.line(Self.unhealthy(problem: (error as? RillError)?.message ?? "\(error)"))
            }
            throw error
        }
        if options.json {
            let value = RecordValue.map([
                RecordField(name: "healthy", value: .bool(report.isHealthy)),
                RecordField(name: "commits", value: .int(Int64(report.commits))),
                RecordField(name: "records", value: .int(Int64(report.records))),
                RecordField(name: "indexKeys", value: .int(Int64(report.indexKeys))),
                RecordField(name: "problems", value: .array(report.problems.map { .string($0) })),
                RecordField(name: "unreported", value: .int(Int64(report.unreported))),
            ])
            output.line(value.jsonString())
        } else {
            output.line(
                "checked \(report.commits) commits, \(report.records) records, \(report.indexKeys) index keys")
            if report.isHealthy {
                output.line("ok: the records and indexes equal a replay of the log")
            } else {
                for problem in report.problems { output.line("problem: \(problem)") }
                if report.unreported > 0 { output.line("and \(report.unreported) more problems") }
            }
        }
        return report.isHealthy ? ExitStatus.success : ExitStatus.failure
    }

    /// Runs this same command in a child `rill` that does the checking, with standard output
    /// and error passed through; a child stopped by a signal means the file stopped LMDB.
    private func runApart(_ options: CheckOptions, output: inout Output) throws -> Int32 {
        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe")
        child.arguments = Array(CommandLine.arguments.dropFirst())
        var environment = ProcessInfo.processInfo.environment
        environment[Self.childVariable] = "1"
        // LMDB's own abort is the report: no backtrace of rill after it.
        environment["SWIFT_BACKTRACE"] = "enable=no"
        child.environment = environment
        try child.run()
        child.waitUntilExit()
        guard child.terminationReason == .uncaughtSignal else { return child.terminationStatus }
        let signal = child.terminationStatus
        let name = [SIGABRT: "SIGABRT", SIGSEGV: "SIGSEGV", SIGBUS: "SIGBUS"][signal].map { " (\($0))" } ?? ""
        let problem =
            "the store's file is damaged: reading its pages stopped the check with signal \(signal)\(name)"
            + (signal == SIGABRT ? ", a failed assertion of LMDB's (on standard error)" : "")
            + "; restore it from a backup"
        if options.json {
            output.line(Self.unhealthy(problem: problem))
        } else {
            output.line("problem: \(problem)")
        }
        return ExitStatus.failure
    }

    /// The JSON report of a store that could not be checked at all: unhealthy, with why.
    private static func unhealthy(problem: String) -> String {
        RecordValue.map([
            RecordField(name: "healthy", value: .bool(false)),
            RecordField(name: "problems", value: .array([.string(problem)])),
        ]).jsonString()
    }
}
