import Synchronization

/// How a keyed container reaches its decoder: read without counting a reference, and kept alive by
/// the container's reference to the tie. A decoder is its own tie; a root's kept container
/// (`RecordDecoder.keptContainer`) has a tie of its own, whose `owner` holds the decoder while the
/// container is lent out and lets go of it once the container is back, so that the decoder and
/// the container it keeps do not hold each other.
class RecordDecoderTie {
    /// The decoder; nil only while a decoder, its own tie, is being made.
    @exclusivity(unchecked) final var decoderPointer: UnsafeMutableRawPointer?
    @exclusivity(unchecked) final var owner: RecordDecoder?

    init() {}

    init(_ decoder: RecordDecoder) {
        decoderPointer = Unmanaged.passUnretained(decoder).toOpaque()
        owner = decoder
    }

    /// Runs `body` with the decoder, borrowed without counting a reference.
    @inline(__always)
    final func withDecoder<R>(_ body: (RecordDecoder) throws -> R) rethrows -> R {
        try Unmanaged<RecordDecoder>.fromOpaque(decoderPointer.unsafelyUnwrapped)._withUnsafeGuaranteedRef(body)
    }
}

extension RecordDecoder {
    /// Whether a `KeyedDecodingContainer` is one reference to its box, so that a box kept as an
    /// `AnyObject` is the container: checked once, on a container made for the purpose, against
    /// what reflection reports of its stored properties.
    static let keyedContainerIsItsBox: Bool = {
        guard MemoryLayout<KeyedDecodingContainer<RecordCodingKey>>.size == MemoryLayout<AnyObject>.size else {
            return false
        }
        let probe = RecordDecoder(
            reader: RecordReader(UnsafeRawBufferPointer(start: nil, count: 0)), offset: 0,
            parent: nil, key: nil, depth: 0)
        let container = KeyedDecodingContainer(RecordKeyedDecodingContainer<RecordCodingKey>(tie: probe))
        let fields = Mirror(reflecting: container).children
        guard fields.count == 1, let field = fields.first, type(of: field.value) is AnyClass else { return false }
        return ObjectIdentifier(field.value as AnyObject)
            == ObjectIdentifier(unsafeBitCast(container, to: AnyObject.self))
    }()

    /// The keyed container over this root's map, made once and lent again for each record the
    /// root is reset to: making one costs a fetch's row more than reading its fields (the type
    /// look-ups of the container and of the standard library's box, the box's allocation).
    ///
    /// Lent again for the same `Key` only. Nothing but this decoder holds it then:
    /// `settleKeptContainer` gave up, after the record before, any container still held
    /// elsewhere. Two containers asked for during one record may be the same box: it holds
    /// nothing but the tie, and reads the decoder's state. While lent out the container holds this
    /// decoder through its tie; `settleKeptContainer` unties it once the container is back.
    func keptContainer<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        if keptKey == ObjectIdentifier(Key.self), let tie = keptTie {
            tie.owner = self
            return unsafeBitCast(keptBox.unsafelyUnwrapped, to: KeyedDecodingContainer<Key>.self)
        }
        let tie = RecordDecoderTie(self)
        let container = KeyedDecodingContainer(RecordKeyedDecodingContainer<Key>(tie: tie))
        keptBox = unsafeBitCast(container, to: AnyObject.self)
        keptKey = ObjectIdentifier(Key.self)
        keptTie = tie
        return container
    }

    /// After a record is read: a kept container that nothing else holds lets go of this decoder
    /// (kept for the next record); one still held elsewhere (a model that kept its container) is
    /// given up, and keeps this decoder alive as long as it lives.
    func settleKeptContainer() {
        guard keptBox != nil else { return }
        if isKnownUniquelyReferenced(&keptBox) {
            keptTie?.owner = nil
        } else {
            keptBox = nil
            keptKey = nil
            keptTie = nil
        }
    }
}

/// One root decoder kept between fetches, with its keyed container: a fetch of one row would
/// otherwise make a decoder and a container for its one record (the container's type looked up,
/// the standard library's box allocated), which cost more than reading the record's fields.
///
/// A fetch takes the decoder off the shelf, or finds the shelf empty (another thread holds it)
/// and makes one; it puts back what it ends with, if the shelf is empty by then. A decoder on
/// the shelf holds no record: it is reset to each record it reads, and a kept container that
/// something else still holds was given up (`settleKeptContainer`).
enum SpareDecoder {
    /// The decoder's address, retained by the shelf; 0 when it is empty.
    private static let shelf = Atomic<UInt>(0)

    /// The decoder on the shelf, taken off it; nil when there is none.
    static func take() -> RecordDecoder? {
        let address = shelf.exchange(0, ordering: .acquiring)
        guard let pointer = UnsafeRawPointer(bitPattern: address) else { return nil }
        return Unmanaged<RecordDecoder>.fromOpaque(pointer).takeRetainedValue()
    }

    /// Puts `decoder`, a root decoder nothing else holds, on the shelf when it is empty.
    static func putBack(_ decoder: RecordDecoder?) {
        guard let decoder else { return }
        let pointer = Unmanaged.passRetained(decoder).toOpaque()
        if !shelf.compareExchange(expected: 0, desired: UInt(bitPattern: pointer), ordering: .releasing).exchanged {
            Unmanaged<RecordDecoder>.fromOpaque(pointer).release()
        }
    }
}

/// A copy of a record's bytes, freed with the last decoder that reads it.
final class RecordBytesCopy {
    let bytes: UnsafeRawBufferPointer

    init(_ source: UnsafeRawBufferPointer) {
        let copy = UnsafeMutableRawBufferPointer.allocate(byteCount: max(source.count, 1), alignment: 8)
        copy.copyMemory(from: source)
        bytes = UnsafeRawBufferPointer(rebasing: copy[..<source.count])
    }

    deinit { bytes.deallocate() }
}
