import Foundation

/// A finished run of one of the package's built executables.
public struct ProcessRun: Sendable {
    public var status: Int32
    public var output: String
    public var error: String
}

/// Runs a built executable (`rill`, `rill-test-helper`, …) to its end, with `input` on its
/// standard input, and returns its status and what it printed.
public func runBuilt(_ executable: String, _ arguments: [String], input: String? = nil) throws -> ProcessRun {
    try runProgram(buildProductsDirectory.appendingPathComponent(executable), arguments, input: input)
}

/// Runs the program at `url` to its end, with `input` (or nothing) on its standard input, and
/// returns its status and what it printed.
public func runProgram(_ url: URL, _ arguments: [String], input: String? = nil) throws -> ProcessRun {
    let process = Process()
    process.executableURL = url
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
