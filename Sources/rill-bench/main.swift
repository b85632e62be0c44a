// rill-bench: Rill's figures beside a baseline measured in the same run.
//
//   swift run -c release rill-bench save
//   swift run -c release rill-bench query
import Foundation

let benchmarks = ["save", "query"]
let name = CommandLine.arguments.dropFirst().first ?? ""
switch name {
case "save":
    try SaveBenchmark().run()
case "query":
    try QueryBenchmark().run()
default:
    FileHandle.standardError.write(Data("usage: rill-bench <\(benchmarks.joined(separator: "|"))>\n".utf8))
    exit(64)
}
