// rill-bench: Rill's figures beside a baseline measured in the same run.
//
//   swift run -c release rill-bench save
import Foundation

let benchmarks = ["save"]
let name = CommandLine.arguments.dropFirst().first ?? ""
switch name {
case "save":
    try SaveBenchmark().run()
default:
    FileHandle.standardError.write(Data("usage: rill-bench <\(benchmarks.joined(separator: "|"))>\n".utf8))
    exit(64)
}
