import Foundation

/// The `Encoder` behind `RecordCoder.encode`: streams one value into a `RecordSink`.
///
/// One encoder exists per value that encodes itself through `encode(to:)`; values the format knows natively
/// (numbers, strings, `Date`, `Data`, `UUID`, `URL`, `Decimal`, …) are written directly without one. A child
/// encoder shares its parent's sink and runs synchronously, so when its `encode(to:)` returns, `finish()` closes
/// whatever container it opened. Containers that may be filled later get a deferred encoder with a sink of its own
/// (see `RecordSink`).
///
/// Misuse that the `Encoder` protocol gives no way to throw from (asking for a keyed container after an unkeyed one,
/// using an encoder after its value finished) is remembered on the root encoder and thrown when encoding ends.
final class RecordEncoder: Encoder, SingleValueEncodingContainer {
    /// Which container, if any, this encoder's value was written through.
    enum State {
        case empty
        case keyed
        case unkeyed
        /// A single-value container was requested but has not received its value yet.
        case single
        case singleWritten
    }

    /// Where this encoder writes.
    let sink: RecordSink
    private let parent: RecordEncoder?
    private let key: (any CodingKey)?
    // Read on every field write, only from synchronous encoding code in accesses that never overlap; dynamic
    // exclusivity checks would cost more than the accesses.
    @exclusivity(unchecked) private var state = State.empty
    @exclusivity(unchecked) private var isFinished = false
    private var failure: RecordError?
    /// Number of elements written through this encoder's unkeyed container.
    @exclusivity(unchecked) var elementCount = 0
    /// How many containers are open around this encoder's value.
    private let enclosingDepth: Int

    init(sink: RecordSink, parent: RecordEncoder?, key: (any CodingKey)?) {
        self.sink = sink
        self.parent = parent
        self.key = key
        enclosingDepth = parent?.depth ?? 0
    }

    /// How many containers are open around this encoder's value, its own included once opened.
    private var depth: Int {
        switch state {
        case .keyed, .unkeyed: enclosingDepth + 1
        case .empty, .single, .singleWritten: enclosingDepth
        }
    }

    // MARK: - Encoder

    /// Built on demand from the parent chain, because it is only needed for errors.
    var codingPath: [any CodingKey] {
        var keys: [any CodingKey] = []
        var node: RecordEncoder? = self
        while let current = node {
            if let key = current.key { keys.append(key) }
            node = current.parent
        }
        return keys.reversed()
    }

    var userInfo: [CodingUserInfoKey: Any] {
        [:]
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        open(.keyed)
        return KeyedEncodingContainer(RecordKeyedEncodingContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        open(.unkeyed)
        return RecordUnkeyedEncodingContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        open(.single)
        return self
    }

    /// Moves to `kind`, writing the container's begin tag the first time; a repeated request for the same kind
    /// continues the same container.
    private func open(_ kind: State) {
        if isFinished {
            fail(.invalidContainerUse, "a container was requested after the value had finished encoding")
            return
        }
        switch (state, kind) {
        case (.empty, .keyed):
            state = .keyed
            sink.write(RecordFormat.Tag.mapBegin)
            checkDepth()
        case (.empty, .unkeyed):
            state = .unkeyed
            sink.write(RecordFormat.Tag.arrayBegin)
            checkDepth()
        case (.empty, .single):
            state = .single
        case (.keyed, .keyed), (.unkeyed, .unkeyed), (.single, .single), (.singleWritten, .single):
            break
        default:
            fail(.invalidContainerUse, "requested a \(kind) container after a \(state) one for the same value")
        }
    }

    /// Records the failure of a container opened deeper than a record may nest
    /// (`RecordFormat.maxDepth`): every reader would refuse the record.
    private func checkDepth() {
        if depth > RecordFormat.maxDepth { fail(.unrepresentableValue, Self.tooDeepMessage) }
    }

    private static let tooDeepMessage =
        "containers are nested more than \(RecordFormat.maxDepth) levels deep, more than a record may hold"

    // MARK: - Lifecycle

    /// Throws if containers of this encoder may no longer write to the shared sink.
    func checkWritable() throws(RecordError) {
        if isFinished {
            throw RecordError(
                .invalidContainerUse, "a container was used after its value had finished encoding",
                codingPath: RecordError.path(codingPath))
        }
    }

    /// Closes the container this encoder opened.
    func finish() {
        forEachTerminatorByte { sink.write($0) }
        isFinished = true
    }

    /// Appends the bytes `finish()` would write, for deferred encoders assembled into the final output.
    func appendTerminator(to buffer: inout [UInt8]) {
        forEachTerminatorByte { buffer.append($0) }
    }

    /// What completes this encoder's value: the end byte of the container it opened, or an empty map if it opened
    /// none (or never wrote its single value), as JSONEncoder writes `{}` for a value that encodes nothing.
    private func forEachTerminatorByte(_ body: (UInt8) -> Void) {
        switch state {
        case .empty, .single:
            body(RecordFormat.Tag.mapBegin)
            body(RecordFormat.Tag.end)
        case .keyed, .unkeyed:
            body(RecordFormat.Tag.end)
        case .singleWritten:
            break
        }
    }

    /// Creates an encoder with its own sink whose output is spliced in at the current end of this encoder's sink.
    func deferredEncoder(key: any CodingKey) -> RecordEncoder {
        if isFinished {
            fail(.invalidContainerUse, "a nested container was requested after the value had finished encoding")
        }
        let deferred = RecordEncoder(sink: RecordSink(capacity: 64), parent: self, key: key)
        sink.addSplice(for: deferred)
        return deferred
    }

    /// Records the first misuse on the root encoder, to be thrown when the top-level encode ends.
    private func fail(_ code: RecordError.Code, _ message: String) {
        var root = self
        while let parent = root.parent { root = parent }
        if root.failure == nil {
            root.failure = RecordError(code, message, codingPath: RecordError.path(codingPath))
        }
    }

    // MARK: - Values

    /// Encodes a whole record value with this encoder as the root.
    func encodeTopLevel<T: Encodable>(_ value: T) throws {
        if try !encodeDirect(value, key: RecordCodingKey.absent) {
            do {
                try value.encode(to: self)
            } catch {
                throw Self.wrap(error, at: self)
            }
            finish()
        }
        if let failure { throw failure }
    }

    /// Writes `value` at the end of the sink, through a child encoder unless the format stores it natively.
    func encodeValue<T: Encodable, K: CodingKey>(_ value: T, key: K) throws {
        if try encodeDirect(value, key: key) { return }
        // In a container too deep already: stop a recursive value here, not at the bottom of its recursion.
        guard depth <= RecordFormat.maxDepth else {
            throw RecordError(.unrepresentableValue, Self.tooDeepMessage, codingPath: RecordError.path(codingPath))
        }
        let child = RecordEncoder(sink: sink, parent: self, key: RecordCodingKey.optional(key))
        let start = sink.count
        let splices = sink.spliceCount
        do {
            try value.encode(to: child)
        } catch {
            throw Self.wrap(error, at: child)
        }
        child.finish()
        // A set or a dictionary wrote its entries in its hash table's order: put them in one that
        // equal values share (unless a nested container's bytes are still to be spliced in).
        if let pairs = RecordFormat.unorderedPairs(T.self), sink.spliceCount == splices {
            sink.sortEntries(from: start, pairs: pairs)
        }
    }

    /// Gives errors thrown by user `encode(to:)` code the path of the value that threw; errors already carrying a
    /// path come from deeper down and pass through untouched.
    private static func wrap(_ error: any Error, at encoder: RecordEncoder) -> any Error {
        if error is RecordError { return error }
        let message: String
        var path = encoder.codingPath
        if case .invalidValue(_, let context) = error as? EncodingError {
            message = context.debugDescription
            // The thrower's own path is the more precise one (it usually names the field being written).
            if context.codingPath.count > path.count { path = context.codingPath }
        } else {
            message = String(describing: error)
        }
        return RecordError(.encodingFailed, message, codingPath: RecordError.path(path), underlyingError: error)
    }

    /// Writes `value` directly when its type has a native tag; returns false for anything else.
    ///
    /// This is what gives `Date`, `Data`, `UUID`, `URL` and `Decimal` their own tags on every path, and it spares
    /// elements of `[Int]`, `[String]`, … a child encoder each. Common types are tested first.
    func encodeDirect<T: Encodable, K: CodingKey>(_ value: T, key: K) throws -> Bool {
        guard let native = RecordFormat.NativeType(T.self) else { return false }
        func unwrap<V>(_ type: V.Type) -> V {
            RecordFormat.identityCast(value, to: V.self)
        }
        switch native {
        case .string: sink.writeString(unwrap(String.self))
        case .int: sink.writeSigned(Int64(unwrap(Int.self)))
        case .bool: sink.writeBool(unwrap(Bool.self))
        case .double: sink.writeDouble(unwrap(Double.self))
        case .date: sink.writeDate(unwrap(Date.self))
        case .uuid: sink.writeUUID(unwrap(UUID.self))
        case .data: sink.writeData(unwrap(Data.self))
        case .url: sink.writeURL(unwrap(URL.self))
        case .decimal: sink.writeDecimal(unwrap(Decimal.self))
        case .int64: sink.writeSigned(unwrap(Int64.self))
        case .uint64: sink.writeUnsigned(unwrap(UInt64.self))
        case .uint: sink.writeUnsigned(UInt64(unwrap(UInt.self)))
        case .int32: sink.writeSigned(Int64(unwrap(Int32.self)))
        case .uint32: sink.writeUnsigned(UInt64(unwrap(UInt32.self)))
        case .float: sink.writeFloat(unwrap(Float.self))
        case .int16: sink.writeSigned(Int64(unwrap(Int16.self)))
        case .uint16: sink.writeUnsigned(UInt64(unwrap(UInt16.self)))
        case .int8: sink.writeSigned(Int64(unwrap(Int8.self)))
        case .uint8: sink.writeUnsigned(UInt64(unwrap(UInt8.self)))
        case .int128, .uint128:
            // `NativeType` only reports these where the types exist.
            guard #available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *) else { return false }
            if native == .int128 {
                try encodeWide(unwrap(Int128.self), key: key)
            } else {
                try encodeWide(unwrap(UInt128.self), key: key)
            }
        }
        return true
    }

    /// Writes a 128-bit integer, which the format stores only when it fits the 64-bit varint of its signedness.
    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func encodeWide<I: FixedWidthInteger, K: CodingKey>(_ value: I, key: K) throws(RecordError) {
        if I.isSigned, let narrow = Int64(exactly: value) {
            sink.writeSigned(narrow)
        } else if !I.isSigned, let narrow = UInt64(exactly: value) {
            sink.writeUnsigned(narrow)
        } else {
            var path = codingPath
            if let key = RecordCodingKey.optional(key) { path.append(key) }
            throw RecordError(
                .unrepresentableValue, "\(value) does not fit in 64 bits", codingPath: RecordError.path(path))
        }
    }

    // MARK: - SingleValueEncodingContainer

    /// Claims the single-value slot; a second value would make the record malformed, so it throws instead.
    private func beginSingleValue() throws(RecordError) {
        guard state == .single, !isFinished else {
            let reason = state == .singleWritten ? "already holds a value" : "cannot be used in this state"
            throw RecordError(
                .invalidContainerUse, "the single value container \(reason)", codingPath: RecordError.path(codingPath))
        }
        state = .singleWritten
    }

    func encodeNil() throws {
        try beginSingleValue()
        sink.write(RecordFormat.Tag.null)
    }

    func encode(_ value: Bool) throws {
        try beginSingleValue()
        sink.writeBool(value)
    }

    func encode(_ value: String) throws {
        try beginSingleValue()
        sink.writeString(value)
    }

    func encode(_ value: Double) throws {
        try beginSingleValue()
        sink.writeDouble(value)
    }

    func encode(_ value: Float) throws {
        try beginSingleValue()
        sink.writeFloat(value)
    }

    func encode(_ value: Int) throws {
        try beginSingleValue()
        sink.writeSigned(Int64(value))
    }

    func encode(_ value: Int8) throws {
        try beginSingleValue()
        sink.writeSigned(Int64(value))
    }

    func encode(_ value: Int16) throws {
        try beginSingleValue()
        sink.writeSigned(Int64(value))
    }

    func encode(_ value: Int32) throws {
        try beginSingleValue()
        sink.writeSigned(Int64(value))
    }

    func encode(_ value: Int64) throws {
        try beginSingleValue()
        sink.writeSigned(value)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func encode(_ value: Int128) throws {
        try beginSingleValue()
        try encodeWide(value, key: RecordCodingKey.absent)
    }

    func encode(_ value: UInt) throws {
        try beginSingleValue()
        sink.writeUnsigned(UInt64(value))
    }

    func encode(_ value: UInt8) throws {
        try beginSingleValue()
        sink.writeUnsigned(UInt64(value))
    }

    func encode(_ value: UInt16) throws {
        try beginSingleValue()
        sink.writeUnsigned(UInt64(value))
    }

    func encode(_ value: UInt32) throws {
        try beginSingleValue()
        sink.writeUnsigned(UInt64(value))
    }

    func encode(_ value: UInt64) throws {
        try beginSingleValue()
        sink.writeUnsigned(value)
    }

    @available(macOS 15.0, iOS 18.0, watchOS 11.0, tvOS 18.0, visionOS 2.0, *)
    func encode(_ value: UInt128) throws {
        try beginSingleValue()
        try encodeWide(value, key: RecordCodingKey.absent)
    }

    func encode<T: Encodable>(_ value: T) throws {
        try beginSingleValue()
        try encodeValue(value, key: RecordCodingKey.absent)
    }
}
