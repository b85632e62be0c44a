/// The fuzzing targets, by name (`rill-fuzz <target>`, `Tests/Fuzz/Corpus/<target>/`).
///
/// Each target takes the bytes of one input, returns when its oracles hold, and throws a
/// `FuzzFailure` when one does not. A crash (a trap, a sanitizer report) is a failure too.
package enum FuzzTargets {
    /// A target: its name and its run over one input.
    package struct Target: Sendable {
        package var name: String
        package var run: @Sendable ([UInt8]) throws -> Void
    }

    package static let all: [Target] = [
        Target(name: "query-parser", run: QueryParserFuzzTarget.run),
        Target(name: "http-request-reader", run: HTTPRequestReaderFuzzTarget.run),
        Target(name: "json-reader", run: JSONReaderFuzzTarget.run),
        Target(name: "record-coder", run: RecordCoderFuzzTarget.run),
        Target(name: "store-operations", run: StoreOperationsFuzzTarget.run),
    ]

    package static func named(_ name: String) -> Target? { all.first { $0.name == name } }
}
