import Dispatch
import Foundation

extension Array where Element: Sendable {
    /// `map` spread over the machine's cores when the array is large enough to pay for it.
    ///
    /// Results keep the input order. When `transform` throws, one of the errors is rethrown
    /// (the first by position among the chunks that failed).
    func concurrentMap<Result: Sendable>(
        minimumChunk: Int = 2_048,
        _ transform: @Sendable (Element) throws -> Result
    ) throws -> [Result] {
        guard count >= 2 * minimumChunk else { return try map(transform) }
        let workers = Swift.min(ProcessInfo.processInfo.activeProcessorCount, count / Swift.max(minimumChunk, 1))
        guard workers > 1 else { return try map(transform) }
        let chunkSize = (count + workers - 1) / workers
        let results = ChunkResults<Result>(chunks: workers)
        withoutActuallyEscaping(transform) { transform in
            let work = UnsafeSendable(value: (self, transform))
            DispatchQueue.concurrentPerform(iterations: workers) { chunk in
                let (elements, transform) = work.value
                let range = chunk * chunkSize..<Swift.min((chunk + 1) * chunkSize, elements.count)
                results.store(chunk, Swift.Result { try elements[range].map(transform) })
            }
        }
        var output: [Result] = []
        output.reserveCapacity(count)
        for chunk in results.take() { output += try chunk.get() }
        return output
    }
}

/// Each chunk's result, written by exactly one worker at its own index.
private final class ChunkResults<Value: Sendable>: @unchecked Sendable {
    // Each index is written once, by one worker; `concurrentPerform` returns only after all
    // workers finished, which orders those writes before `take()`.
    private var slots: [Swift.Result<[Value], any Error>?]

    init(chunks: Int) { slots = Array(repeating: nil, count: chunks) }

    func store(_ index: Int, _ result: Swift.Result<[Value], any Error>) {
        slots.withUnsafeMutableBufferPointer { $0[index] = result }
    }

    func take() -> [Swift.Result<[Value], any Error>] { slots.map { $0! } }
}

/// Hands values that are only read to the workers of one `concurrentPerform` call.
private struct UnsafeSendable<Value>: @unchecked Sendable {
    // Read-only while shared, and the call that shares it outlives every reader.
    let value: Value
}
