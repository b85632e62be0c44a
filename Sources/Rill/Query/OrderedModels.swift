/// The models of a typed fetch whose matches arrive in its order: the window's offset is passed
/// over, then models are kept until its limit.
///
/// In memory of its own rather than an `Array`: a fetch is not specialized for the model types
/// of other modules, and in code generic over `T` each `Array<T>.append` looks up the metadata of
/// `Array<T>` (about 330 instructions) and calls the unspecialized `append` (about 360), for
/// every row. Here a row is one copy into the buffer, and the array is made once, at the end.
/// Not copyable, so that its memory has one owner. Not generic itself, only its methods: a
/// generic type's metadata is looked up wherever unspecialized code makes or destroys a value of
/// it (twice a fetch); the element type is given to each method, and kept for the `deinit`.
@usableFromInline
struct OrderedModels: ~Copyable {
    private let window: QueryWindow
    private let elementType: Any.Type
    private var skipped = 0
    private var base: UnsafeMutableRawPointer?
    private var count = 0
    private var capacity = 0

    init<T>(of type: T.Type, window: QueryWindow) {
        self.window = window
        elementType = type
    }

    deinit {
        guard let base else { return }
        if count > 0 { Self.deinitialize(base, count: count, as: elementType) }
        base.deallocate()
    }

    private static func deinitialize<T>(_ base: UnsafeMutableRawPointer, count: Int, as type: T.Type) {
        base.assumingMemoryBound(to: T.self).deinitialize(count: count)
    }

    /// Keeps `model` unless the window's offset passes over it; false when no further model is
    /// wanted. `T` is the type the buffer was made for.
    @inline(__always)
    mutating func add<T>(_ model: consuming T) -> Bool {
        if skipped < window.offset {
            skipped += 1
            return true
        }
        if count == capacity { grow(T.self) }
        (base.unsafelyUnwrapped.assumingMemoryBound(to: T.self) + count).initialize(to: model)
        count += 1
        return window.keepsMore(afterKeeping: count)
    }

    /// Room for more models: the window's limit at first (at most 1,024), then twice as many.
    @inline(never)
    private mutating func grow<T>(_ type: T.Type) {
        let wanted = capacity == 0 ? max(1, min(window.limit ?? 16, 1_024)) : capacity * 2
        let grown = UnsafeMutablePointer<T>.allocate(capacity: wanted)
        if let base {
            grown.moveInitialize(from: base.assumingMemoryBound(to: T.self), count: count)
            base.deallocate()
        }
        base = UnsafeMutableRawPointer(grown)
        capacity = wanted
    }

    /// The models kept, in order, as `move` makes them an array of the models at a base address
    /// and of a count (moved out: they are not destroyed there after); the buffer is empty after.
    /// `T` is the type the buffer was made for.
    ///
    /// `move` is `array(movingFrom:count:)`, given by code compiled for `T` where it can be
    /// (`QueryExecutor.models()`): there the array's initializer is specialized (unspecialized,
    /// it took about 1,200 instructions).
    mutating func results<T>(_ type: T.Type, moving move: (UnsafeMutableRawPointer, Int) -> [T]) -> [T] {
        guard let base, count > 0 else { return [] }
        let kept = count
        count = 0
        return move(base, kept)
    }

    /// An array of the `count` models of type `T` at `base`, moved out of there.
    @inlinable
    static func array<T>(movingFrom base: UnsafeMutableRawPointer, count: Int) -> [T] {
        [T](unsafeUninitializedCapacity: count) { buffer, initialized in
            buffer.baseAddress.unsafelyUnwrapped.moveInitialize(
                from: base.assumingMemoryBound(to: T.self), count: count)
            initialized = count
        }
    }
}
