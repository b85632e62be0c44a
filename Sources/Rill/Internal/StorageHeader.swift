/// The element counts of arrays and dictionaries of any element types, read from the headers of
/// their storage, and the empty dictionary of any types.
///
/// In code generic over the model that is not specialized (a fetch, called from the model's
/// module), `count` and `isEmpty` of an `Array<SortDescriptor<T>>` or a `Dictionary<[UInt8], T?>`
/// are calls that first look up the metadata of the element types (about 330 to 450 instructions
/// each) on every fetch, most of which have no sort, nothing to prefetch and no unsaved change.
/// An array or a dictionary is one reference whatever its elements, and its count sits in the
/// header of its storage (native on every platform this runs on), so it is read as one of bytes.
@usableFromInline
enum StorageHeader {
    @inline(__always)
    @inlinable
    static func count<Element>(of array: [Element]) -> Int {
        unsafeBitCast(array, to: [UInt8].self).count
    }

    @inline(__always)
    @inlinable
    static func isEmpty<Key, Value>(_ dictionary: [Key: Value]) -> Bool {
        unsafeBitCast(dictionary, to: [UInt8: UInt8].self).isEmpty
    }

    /// An empty dictionary: the one empty storage that dictionaries of every type share, made
    /// without the metadata of `Value` (`Dictionary()`, unspecialized, looks up that of `T?`).
    @inline(__always)
    @inlinable
    static func emptyDictionary<Key, Value>() -> [Key: Value] {
        unsafeBitCast([UInt8: UInt8](), to: [Key: Value].self)
    }
}
