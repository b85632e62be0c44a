/// The bytes of one fuzzing input, read as the choices of a target: each read takes the next
/// bytes, and an input that runs out reads as zeros, so every input means something and a
/// shorter input means a simpler case.
package struct FuzzInput {
    package let bytes: [UInt8]
    package private(set) var position = 0

    package init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Whether every byte has been read.
    package var isAtEnd: Bool { position >= bytes.count }

    /// The bytes not read yet.
    package var rest: ArraySlice<UInt8> { bytes[min(position, bytes.count)...] }

    /// The next byte (0 past the end).
    package mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A number in `range`, from one byte (or two for a range wider than 256).
    package mutating func int(in range: ClosedRange<Int>) -> Int {
        let width = UInt(range.upperBound - range.lowerBound) + 1
        let raw = width > 256 ? UInt(byte()) << 8 | UInt(byte()) : UInt(byte())
        return range.lowerBound + Int(raw % width)
    }

    package mutating func bool() -> Bool { byte() & 1 == 1 }

    /// One of `choices` (which must not be empty).
    package mutating func pick<T>(_ choices: [T]) -> T { choices[int(in: 0...choices.count - 1)] }

    /// The next `count` bytes, fewer at the end.
    package mutating func take(_ count: Int) -> [UInt8] {
        let start = min(position, bytes.count)
        let end = min(start + count, bytes.count)
        position = end
        return Array(bytes[start..<end])
    }

    /// The next 8 bytes as a `UInt64` (zeros past the end).
    package mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return value
    }
}
