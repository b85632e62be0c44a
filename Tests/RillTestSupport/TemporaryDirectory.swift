import Foundation
import Rill

/// A fresh directory under the system's temporary directory, removed when the value is released.
public final class TemporaryDirectory: @unchecked Sendable {
    // Immutable after init.
    public let url: URL

    public init(_ label: String = "rill-test") {
        url = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("\(label)-\(UUID().uuidString)")
        try! FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of an entry inside the directory (not created).
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }

    /// The path of a new store in this directory holding `records` `Counter`s (ids and values
    /// 0, 1, …, each with a payload of `payload` bytes), saved in one commit.
    public func counterStore(_ name: String = "store", records: Int = 10, payload: Int = 0) throws -> String {
        let path = self.path(name)
        let container = try ModelContainer(
            for: Counter.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        for id in 0..<records {
            context.insert(Counter(id: id, value: id, payload: String(repeating: "p", count: payload)))
        }
        try context.save()
        return path
    }
}

/// Where the build products (the `rill` and `rill-test-helper` executables) are.
public var buildProductsDirectory: URL {
    let executable =
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
        ?? CommandLine.arguments[0]
    var directory = URL(fileURLWithPath: executable).deletingLastPathComponent()
    // On Linux the test binary is `<products>/<Package>PackageTests.xctest`; be tolerant of bundles too.
    while !FileManager.default.fileExists(atPath: directory.appendingPathComponent("rill-test-helper").path),
        directory.path != "/"
    {
        directory.deleteLastPathComponent()
    }
    return directory
}

/// The size of the oracle tests: small for every `make test`, larger on demand (`make oracle`)
/// through `RILL_ORACLE_RECORDS` and `RILL_ORACLE_QUERIES`.
public enum OracleScale {
    public static func records(default value: Int) -> Int {
        ProcessInfo.processInfo.environment["RILL_ORACLE_RECORDS"].flatMap(Int.init) ?? value
    }

    public static func queries(default value: Int) -> Int {
        ProcessInfo.processInfo.environment["RILL_ORACLE_QUERIES"].flatMap(Int.init) ?? value
    }

    /// The value of the environment variable `name` when it is a number, else `value`.
    public static func value(_ name: String, default value: Int) -> Int {
        ProcessInfo.processInfo.environment[name].flatMap(Int.init) ?? value
    }
}

/// A finished run of one of the package's built executables.
public struct ProcessRun: Sendable {
    public var status: Int32
    public var output: String
    public var error: String
}

/// Runs a built executable (`rill`, `rill-test-helper`, …) to its end, with `input` on its
/// standard input, and returns its status and what it printed.
public func runBuilt(_ executable: String, _ arguments: [String], input: String? = nil) throws -> ProcessRun {
    let process = Process()
    process.executableURL = buildProductsDirectory.appendingPathComponent(executable)
    process.arguments = arguments
    let output = Pipe()
    let error = Pipe()
    let standardInput = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = standardInput
    try process.run()
    if let input { standardInput.fileHandleForWriting.write(Data(input.utf8)) }
    try standardInput.fileHandleForWriting.close()
    // Read before waiting, so a large output cannot fill the pipe and stall the child.
    let outData = output.fileHandleForReading.readDataToEndOfFile()
    let errData = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProcessRun(
        status: process.terminationStatus, output: String(decoding: outData, as: UTF8.self),
        error: String(decoding: errData, as: UTF8.self))
}
