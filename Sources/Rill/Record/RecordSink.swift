import Foundation

/// The growable byte buffer that an encoder, and the child encoders of the values it contains, write to.
///
/// Containers normally write straight into their encoder's sink, in order. A container that user code may fill
/// later — from `nestedContainer`, `nestedUnkeyedContainer` or `superEncoder` — cannot, because writes to its parent
/// may come first. Such a container gets its own sink, and the parent records a splice: the position where the
/// nested bytes belong. `assemble(into:)` stitches everything together once encoding is over.
///
/// The storage is a raw allocation rather than an `[UInt8]`: every field write would otherwise pay for a uniqueness
/// check and a bounds check per appended byte, which dominated encoding time. The properties opt out of dynamic
/// exclusivity checks because every access is a short, non-overlapping read or write from synchronous code on one
/// thread; the checks cost more than the writes themselves.
final class RecordSink {
    @exclusivity(unchecked) private var base: UnsafeMutablePointer<UInt8>
    @exclusivity(unchecked) private var capacity: Int
    /// Number of bytes written so far, excluding spliced content.
    @exclusivity(unchecked) private(set) var count = 0
    /// Deferred encoders and the position where each one's output goes, in non-decreasing position order.
    @exclusivity(unchecked) private var splices: [(position: Int, encoder: RecordEncoder)] = []

    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 16)
        base = UnsafeMutablePointer<UInt8>.allocate(capacity: self.capacity)
    }

    deinit {
        base.deallocate()
    }

    // MARK: - Writing

    /// Makes room for `extra` more bytes.
    private func reserve(_ extra: Int) {
        if capacity &- count < extra { grow(toAtLeast: count + extra) }
    }

    private func grow(toAtLeast minimum: Int) {
        let newCapacity = Swift.max(capacity * 2, minimum)
        let newBase = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newBase.update(from: base, count: count)
        base.deallocate()
        base = newBase
        capacity = newCapacity
    }

    /// Appends one byte, typically a tag.
    func write(_ byte: UInt8) {
        reserve(1)
        base[count] = byte
        count += 1
    }

    /// Appends raw bytes.
    func write(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        UnsafeMutableRawPointer(base + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Appends an unsigned LEB128 varint.
    func writeVarint(_ value: UInt64) {
        reserve(10)
        var position = count
        var rest = value
        while rest >= 0x80 {
            base[position] = UInt8(truncatingIfNeeded: rest) | 0x80
            rest >>= 7
            position += 1
        }
        base[position] = UInt8(truncatingIfNeeded: rest)
        count = position + 1
    }

    /// Appends a signed integer value (tag and zigzag varint).
    func writeSigned(_ value: Int64) {
        write(RecordFormat.Tag.signed)
        writeVarint(RecordFormat.zigzag(value))
    }

    /// Appends an unsigned integer value (tag and varint).
    func writeUnsigned(_ value: UInt64) {
        write(RecordFormat.Tag.unsigned)
        writeVarint(value)
    }

    /// Appends a Bool value.
    func writeBool(_ value: Bool) {
        write(value ? RecordFormat.Tag.trueValue : RecordFormat.Tag.falseValue)
    }

    /// Appends a Float value; the bit pattern is kept so NaN payloads and negative zero survive.
    func writeFloat(_ value: Float) {
        write(RecordFormat.Tag.float)
        withUnsafeBytes(of: value.bitPattern.littleEndian) { write($0) }
    }

    /// Appends a Double value; the bit pattern is kept so NaN payloads and negative zero survive.
    func writeDouble(_ value: Double) {
        write(RecordFormat.Tag.double)
        withUnsafeBytes(of: value.bitPattern.littleEndian) { write($0) }
    }

    /// Appends a Date value as its reference-date interval, which round-trips exactly.
    func writeDate(_ value: Date) {
        write(RecordFormat.Tag.date)
        withUnsafeBytes(of: value.timeIntervalSinceReferenceDate.bitPattern.littleEndian) { write($0) }
    }

    /// Appends a UUID value as its 16 bytes.
    func writeUUID(_ value: UUID) {
        write(RecordFormat.Tag.uuid)
        withUnsafeBytes(of: value.uuid) { write($0) }
    }

    /// Appends a tag followed by a length-prefixed UTF-8 string; also used for map keys, URLs and decimals.
    func writeText(_ tag: UInt8, _ text: String) {
        let utf8 = text.utf8
        write(tag)
        writeVarint(UInt64(utf8.count))
        let copied: Void? = utf8.withContiguousStorageIfAvailable { write(UnsafeRawBufferPointer($0)) }
        if copied == nil {
            reserve(utf8.count)
            for byte in utf8 {
                base[count] = byte
                count += 1
            }
        }
    }

    /// Appends a String value.
    func writeString(_ value: String) {
        writeText(RecordFormat.Tag.string, value)
    }

    /// Appends a map key, which is written like a String value.
    func writeKey(_ key: String) {
        writeText(RecordFormat.Tag.string, key)
    }

    /// Appends a Data value.
    func writeData(_ value: Data) {
        write(RecordFormat.Tag.data)
        writeVarint(UInt64(value.count))
        value.withUnsafeBytes { write($0) }
    }

    /// Appends a URL value as its absolute string.
    func writeURL(_ value: URL) {
        writeText(RecordFormat.Tag.url, value.absoluteString)
    }

    /// Appends a Decimal value as its locale-independent description.
    func writeDecimal(_ value: Decimal) {
        writeText(RecordFormat.Tag.decimal, value.description)
    }

    // MARK: - Splicing and output

    /// Whether spliced content still has to be assembled.
    var hasSplices: Bool {
        !splices.isEmpty
    }

    /// How many deferred encoders' outputs are still to be spliced in.
    var spliceCount: Int {
        splices.count
    }

    /// Puts the entries of the container written from `start` to the end of the buffer in the order
    /// of their bytes: a map's entries by their keys, an array's elements, or, with `pairs`, an
    /// array's pairs of elements by the first of each (a dictionary stored as key, value, key,
    /// value…). Leaves the bytes as they are when they do not read as such a container.
    func sortEntries(from start: Int, pairs: Bool) {
        guard start >= 0, count - start >= 3, base[count - 1] == RecordFormat.Tag.end else { return }
        let isMap = base[start] == RecordFormat.Tag.mapBegin
        guard isMap || base[start] == RecordFormat.Tag.arrayBegin else { return }
        let bytes = UnsafeRawBufferPointer(start: base, count: count)
        let reader = RecordReader(bytes)
        let end = count - 1
        var entries: [(whole: Range<Int>, key: Range<Int>)] = []
        var position = start + 1
        do {
            while position < end {
                let first = position
                let keyEnd =
                    isMap ? try reader.keyRange(at: position).upperBound : try reader.skipValue(at: position, depth: 1)
                position = isMap || pairs ? try reader.skipValue(at: keyEnd, depth: 1) : keyEnd
                entries.append((first..<position, first..<keyEnd))
            }
        } catch {
            return
        }
        guard position == end, entries.count > 1 else { return }
        func precedes(_ a: Range<Int>, _ b: Range<Int>) -> Bool {
            UnsafeRawBufferPointer(rebasing: bytes[a]).lexicographicallyPrecedes(
                UnsafeRawBufferPointer(rebasing: bytes[b]))
        }
        let sorted = entries.sorted {
            precedes($0.key, $1.key) || (!precedes($1.key, $0.key) && precedes($0.whole, $1.whole))
        }
        guard !zip(sorted, entries).allSatisfy({ $0.whole == $1.whole }) else { return }
        var ordered: [UInt8] = []
        ordered.reserveCapacity(end - start - 1)
        for entry in sorted { ordered.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[entry.whole])) }
        ordered.withUnsafeBytes {
            UnsafeMutableRawPointer(base + start + 1).copyMemory(from: $0.baseAddress!, byteCount: $0.count)
        }
    }

    /// Reserves the current end of the buffer for the output of `encoder`.
    func addSplice(for encoder: RecordEncoder) {
        splices.append((count, encoder))
    }

    /// Appends the bytes with every deferred encoder's output inserted at its splice point, recursively.
    func assemble(into output: inout [UInt8]) {
        var start = 0
        for splice in splices {
            output.append(contentsOf: UnsafeBufferPointer(start: base + start, count: splice.position - start))
            splice.encoder.sink.assemble(into: &output)
            splice.encoder.appendTerminator(to: &output)
            start = splice.position
        }
        output.append(contentsOf: UnsafeBufferPointer(start: base + start, count: count - start))
    }

    /// Drops the references to deferred encoders, recursively.
    ///
    /// A deferred encoder refers to its parent, which refers back to this sink, so the references must be cut by
    /// hand once encoding is over or the objects would never be freed.
    func releaseSplices() {
        let released = splices
        splices = []
        for splice in released { splice.encoder.sink.releaseSplices() }
    }
}
