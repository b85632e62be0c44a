/// The models of a typed fetch whose matches arrive in its order: the window's offset is passed
/// over, then models are kept until its limit.
///
/// In memory of its own rather than an `Array`: a fetch is not specialized for the model types
/// of other modules, and in code generic over `T` each `Array<T>.append` looks up the metadata of
/// `Array<T>` (about 330 instructions) and calls the unspecialized `append` (about 360), for
/// every row. Here a row is one copy into the buffer, and the array is made once, at the end.
/// Not copyable, so that its memory has one owner; its layout does not depend on `T`, so code
/// generic over `T` reads its fields without looking anything up.
struct OrderedModels<T>: ~Copyable {
    private let window: QueryWindow
    private var skipped = 0
    private var base: UnsafeMutablePointer<T>?
    private var count = 0
    private var capacity = 0

    init(window: QueryWindow) {
        self.window = window
    }

    deinit {
        guard let base else { return }
        base.deinitialize(count: count)
        base.deallocate()
    }

    /// Keeps `model` unless the window's offset passes over it; false when no further model is
    /// wanted.
    @inline(__always)
    mutating func add(_ model: T) -> Bool {
        if skipped < window.offset {
            skipped += 1
            return true
        }
        if count == capacity { grow() }
        (base.unsafelyUnwrapped + count).initialize(to: model)
        count += 1
        return window.keepsMore(afterKeeping: count)
    }

    /// Room for more models: the window's limit at first (at most 1,024), then twice as many.
    @inline(never)
    private mutating func grow() {
        let wanted = capacity == 0 ? max(1, min(window.limit ?? 16, 1_024)) : capacity * 2
        let grown = UnsafeMutablePointer<T>.allocate(capacity: wanted)
        if let base {
            grown.moveInitialize(from: base, count: count)
            base.deallocate()
        }
        base = grown
        capacity = wanted
    }

    /// The models kept, in order; the buffer is empty after.
    mutating func results() -> [T] {
        guard let base, count > 0 else { return [] }
        let kept = count
        count = 0
        return [T](unsafeUninitializedCapacity: kept) { buffer, initialized in
            buffer.baseAddress.unsafelyUnwrapped.moveInitialize(from: base, count: kept)
            initialized = kept
        }
    }
}
