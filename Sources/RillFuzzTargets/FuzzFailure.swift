/// An oracle that a fuzzing target checks does not hold for an input: what was expected and what
/// came instead. `rill-fuzz` stops on it as on a crash, so that libFuzzer keeps the input.
package struct FuzzFailure: Error, CustomStringConvertible {
    package var description: String

    package init(_ description: String) { self.description = description }
}
