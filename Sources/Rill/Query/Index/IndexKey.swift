import Foundation

/// The order-preserving encoding of field values into index keys.
///
/// Index databases compare keys with `memcmp`, so a key's bytes must sort the way its values do. Every encoding is
/// self-delimiting and no encoding is a proper prefix of another, which makes a compound key (the encodings of
/// several values, one after the other, with nothing in between) sort in the lexicographic order of its value tuple.
///
/// Each value starts with a tag byte, and tags order the classes of values:
///
/// | Tag         | Value                              | Payload                                    |
/// |-------------|------------------------------------|--------------------------------------------|
/// | `0x05`      | null                               | none                                       |
/// | `0x10`      | false                              | none                                       |
/// | `0x11`      | true                               | none                                       |
/// | `0x20`      | −infinity                          | none                                       |
/// | `0x21`      | negative finite number             | exponent and fraction, bitwise inverted    |
/// | `0x22`      | zero (`0`, `0.0` and `-0.0`)       | none                                       |
/// | `0x23`      | positive finite number             | exponent and fraction                      |
/// | `0x24`      | +infinity                          | none                                       |
/// | `0x25`      | NaN (every NaN, of any payload)    | none                                       |
/// | `0x30`      | string                             | escaped NFC UTF-8, then `00 01` (or a cut) |
/// | `0x38`      | URL (its text)                     | escaped NFC UTF-8, then `00 01` (or a cut) |
/// | `0x40`      | data                               | escaped bytes, then `00 01` (or a cut)     |
/// | `0x50`      | date                               | 8 bytes                                    |
/// | `0x60`      | UUID                               | its 16 bytes                               |
///
/// So null sorts before everything (nil first for optionals), then false, true, numbers, strings, URLs, data,
/// dates and UUIDs.
///
/// **Numbers.** `int`, `uint`, `float`, `double` and `decimal` share one numeric order, exact for every `Int64`,
/// `UInt64`, `Float` and `Double`; numerically equal values of different kinds (`3`, `3.0`, `Float(3)`) have
/// identical keys. A finite non-zero number is written as `2^e × 1.f`: `e` is the position of its leading one bit
/// (−1074 … 1023), `f` the up to 63 bits after that bit, enough for any 64-bit integer and any Double. After the
/// sign tag come `e + 1074` as two big-endian bytes, then `f` in groups of 7 bits, most significant first, each
/// group stored as `group << 1 | more`, where `more` is 1 when non-zero bits follow. Trailing zero groups are not
/// written, except that at least one group always is. With a common exponent, fractions compare group by group;
/// a fraction that stops where another continues with the same group is the smaller, and its final byte is, since
/// its `more` bit is 0. Negative numbers invert every byte after the tag, so a larger magnitude sorts first. A
/// decimal is keyed by the `Double` nearest its text. Rounding never reverses an order, but distinct decimals (and a
/// decimal and an integer beyond 2^53) can share a key: equality and range bounds on decimal keys are approximate,
/// so a scan must treat such bounds as inclusive and leave the exact comparison to the re-check of the record.
///
/// **Strings, URLs and data.** Strings and URLs are first normalized to NFC by the standard library's normalizer,
/// the one `String.==` uses, so strings Swift calls equal (canonically equivalent) have equal keys. `memcmp` of NFC
/// UTF-8 is the lexicographic order of the NFC form's Unicode scalars, the order Swift documents for `<`. Swift's `<`
/// (as of 6.3) departs from it when one string is a prefix of the other, as written or in NFC, and normalization
/// changes the text where they meet: `"x\u{F72}" < "x\u{F72}\u{F71}"`, yet `"x\u{F71}\u{F72}"`, equal to the longer
/// one, is less than `"x\u{F72}"`; and neither of `"\u{915}"` and `"\u{958}"` (U+0915 U+093C in NFC) is less than the
/// other. Keys keep the NFC order, a total order consistent with `==`, so a sort by `<` may order such strings
/// differently from an index scan. A zero byte is written `00 FF`, and the value ends with `00 01`, so a value sorts
/// before every longer value it is a prefix of, whatever follows it in the key. Data is escaped the same way.
///
/// **Dates.** The `timeIntervalSinceReferenceDate` as a Double's bit pattern, big-endian, with the sign bit set for
/// non-negative values and every bit inverted for negative ones. `-0.0` is written as `0.0` and every NaN as the
/// canonical quiet NaN, which sorts after +infinity.
///
/// **UUIDs.** The 16 bytes in `UUID.uuid` order. This is also the order of `uuidString`, whose uppercase hex digits
/// sort as their values do.
///
/// Arrays and maps have no key encoding: `append(_:to:)` throws for them.
///
/// **Cut values.** An index key holds at most 511 bytes, so `append(_:to:payloadLimit:)` keeps only the first
/// `payloadLimit` bytes of a long string's, URL's or data's escaped payload (one byte fewer when the cut would split a
/// `00 FF` pair) and ends it with `00 02` instead of `00 01`. The cut depends on the value alone, so keys stay in
/// the values' order, not strictly: a value's whole encoding sorts before the cut one of every longer value it is a
/// prefix of (`00 01` < `00 02`), a cut one before every value that continues past its prefix with a byte of its own
/// (`00 02` < any non-zero byte, < `00 FF`), and long values that share the first bytes share a key prefix. Such
/// ties are only between cut values, which a scan must re-check on the record. `00 02` keeps every encoding
/// self-delimiting and prefix-free.
///
/// `decode(_:offset:)` accepts only what `append(_:to:)` writes, and returns values in canonical form: integral
/// numbers in `Int64` range as `.int`, larger ones in `UInt64` range as `.uint`, other numbers (fractions,
/// infinities, NaN, magnitudes beyond 64 bits) as `.double`; decimals come back as numbers, strings and URLs in NFC,
/// dates with `-0.0` as `0.0` and NaN canonical. Re-encoding a decoded value gives back the bytes it was read from.
package enum IndexKey {
    /// Appends the order-preserving encoding of `value` to `key`.
    ///
    /// For values a, b of the same class, the `memcmp` order of their encodings is the order of the values, and
    /// the encodings are equal exactly when the values are (numerically, for numbers; by canonical equivalence, for
    /// strings). Throws for arrays and maps, and for a decimal whose text is not a number; `key` is then unchanged.
    package static func append(_ value: RecordValue, to key: inout [UInt8]) throws(IndexKeyError) {
        switch value {
        case .null:
            key.append(Tag.null)
        case .bool(let flag):
            key.append(flag ? Tag.trueValue : Tag.falseValue)
        case .int(let number):
            appendNumber(Number(negative: number < 0, magnitude: number.magnitude), to: &key)
        case .uint(let number):
            appendNumber(Number(negative: false, magnitude: number), to: &key)
        case .float(let number):
            appendNumber(Number(Double(number)), to: &key)
        case .double(let number):
            appendNumber(Number(number), to: &key)
        case .decimal(let text):
            guard let number = Double(text) else {
                throw .unindexable("the decimal \"\(text)\" is not a number")
            }
            appendNumber(Number(number), to: &key)
        case .string(let text):
            key.append(Tag.string)
            appendEscaped(text, to: &key)
        case .url(let text):
            key.append(Tag.url)
            appendEscaped(text, to: &key)
        case .data(let bytes):
            key.append(Tag.data)
            appendEscaped(bytes, to: &key)
        case .date(let date):
            key.append(Tag.date)
            let bits = orderedBits(of: date.timeIntervalSinceReferenceDate)
            for shift in stride(from: 56, through: 0, by: -8) {
                key.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
            }
        case .uuid(let uuid):
            key.append(Tag.uuid)
            withUnsafeBytes(of: uuid.uuid) { key.append(contentsOf: $0) }
        case .array, .map:
            throw .unindexable("arrays and maps cannot be index keys")
        }
    }

    /// Decodes one encoded value starting at `offset`, advancing it past the value (for tests, `rill check`, explain
    /// output).
    ///
    /// Returns the value in the canonical form described on `IndexKey`. Throws when the bytes at `offset` are not
    /// exactly what `append(_:to:)` writes for some value (truncated, unknown tag, invalid escape, invalid or
    /// non-NFC UTF-8, a non-canonical number or date); `offset` is then unchanged.
    package static func decode(
        _ key: UnsafeRawBufferPointer, offset: inout Int
    ) throws(IndexKeyError) -> RecordValue {
        guard offset >= 0, offset <= key.count else {
            throw .malformed(at: offset, "offset outside the key's \(key.count) bytes")
        }
        var reader = Reader(bytes: key, position: offset)
        let value = try reader.value()
        offset = reader.position
        return value
    }

    /// Appends the encoding of `value`, with a string's, URL's or data's escaped payload cut to its first
    /// `payloadLimit` bytes and ended by `00 02` when it is longer (see "Cut values" on `IndexKey`).
    ///
    /// - Returns: whether the value was cut; its key then stands for every value that starts with the same bytes.
    package static func append(
        _ value: RecordValue, to key: inout [UInt8], payloadLimit: Int
    ) throws(IndexKeyError) -> Bool {
        let start = key.count
        try append(value, to: &key)
        switch value {
        case .string, .url, .data: break
        default: return false
        }
        // The payload lies between the tag and the two-byte terminator.
        guard key.count - start - 3 > payloadLimit else { return false }
        var end = start + 1 + max(payloadLimit, 1)
        // Only the first byte of a `00 FF` pair is zero: keep the pair whole or not at all.
        if key[end - 1] == 0 { end -= 1 }
        key.removeSubrange(end...)
        key.append(0)
        key.append(Escape.cut)
        return true
    }

    /// Moves `offset` past one encoded value, whole or cut, checking only its structure (tags, escapes, lengths).
    ///
    /// - Returns: whether the value is a cut one, and the length of its escaped payload (0 for values without one).
    package static func skip(
        _ key: UnsafeRawBufferPointer, offset: inout Int
    ) throws(IndexKeyError) -> (isCut: Bool, payload: Int) {
        guard offset >= 0, offset <= key.count else {
            throw .malformed(at: offset, "offset outside the key's \(key.count) bytes")
        }
        var reader = Reader(bytes: key, position: offset)
        let extent = try reader.skip()
        offset = reader.position
        return extent
    }

    /// The smallest key strictly greater than every key that starts with `prefix` (for range-scan upper bounds over
    /// a prefix); nil when there is none (all 0xFF).
    ///
    /// Trailing `0xFF` bytes are dropped and the last remaining byte is incremented. An empty prefix, or one made
    /// only of `0xFF` bytes, has no such key: the scan then runs to the end of the database.
    package static func successor(ofPrefix prefix: [UInt8]) -> [UInt8]? {
        guard let last = prefix.lastIndex(where: { $0 != 0xFF }) else { return nil }
        var bound = Array(prefix[...last])
        bound[last] += 1
        return bound
    }
}

// MARK: - Tags

extension IndexKey {
    /// Tag bytes; gaps between classes leave room for classes added later without rewriting existing keys.
    private enum Tag {
        static let null: UInt8 = 0x05
        static let falseValue: UInt8 = 0x10
        static let trueValue: UInt8 = 0x11
        static let negativeInfinity: UInt8 = 0x20
        static let negative: UInt8 = 0x21
        static let zero: UInt8 = 0x22
        static let positive: UInt8 = 0x23
        static let positiveInfinity: UInt8 = 0x24
        static let nan: UInt8 = 0x25
        static let string: UInt8 = 0x30
        static let url: UInt8 = 0x38
        static let data: UInt8 = 0x40
        static let date: UInt8 = 0x50
        static let uuid: UInt8 = 0x60
    }

    /// Bytes that follow a zero byte inside escaped payloads.
    private enum Escape {
        /// `00 FF` is a zero byte of the value; 0xFF sorts it after the terminator and after every shorter value.
        static let zero: UInt8 = 0xFF
        /// `00 01` ends the value; lower than any continuation, so prefixes sort first.
        static let end: UInt8 = 0x01
        /// `00 02` ends a value cut to its first bytes: after the whole prefix, before every continuation.
        static let cut: UInt8 = 0x02
    }
}

// MARK: - Numbers

extension IndexKey {
    /// Added to the exponent so the smallest one, that of the least subnormal Double, is stored as 0.
    private static let exponentBias = 1074
    /// The largest exponent a key may hold: that of the largest finite Double.
    private static let maxExponent = 1023
    /// The 63 bits that follow the leading one bit of a normalized significand.
    private static let fractionMask: UInt64 = ~(1 << 63)
    /// A 63-bit fraction holds at most nine 7-bit groups.
    private static let maxGroups = 9

    /// A number reduced to what its key needs: exact for every Int64, UInt64, Float and Double.
    private enum Number {
        case nan
        case infinity(negative: Bool)
        case zero
        /// `±2^exponent × (1 + fraction / 2^63)`, with `fraction` below 2^63.
        case finite(negative: Bool, exponent: Int, fraction: UInt64)

        init(_ value: Double) {
            if value.isNaN {
                self = .nan
            } else if value.isInfinite {
                self = .infinity(negative: value < 0)
            } else if value == 0 {
                self = .zero
            } else if value.isNormal {
                self.init(
                    negative: value < 0, significand: value.significandBitPattern | 1 << 52,
                    scale: Int(value.exponent) - 52)
            } else {
                self.init(negative: value < 0, significand: value.significandBitPattern, scale: -1074)
            }
        }

        init(negative: Bool, magnitude: UInt64) {
            if magnitude == 0 {
                self = .zero
            } else {
                self.init(negative: negative, significand: magnitude, scale: 0)
            }
        }

        /// The number `±significand × 2^scale`; `significand` must not be zero.
        private init(negative: Bool, significand: UInt64, scale: Int) {
            let shift = significand.leadingZeroBitCount
            self = .finite(
                negative: negative, exponent: scale + 63 - shift,
                fraction: (significand << UInt64(shift)) & IndexKey.fractionMask)
        }
    }

    private static func appendNumber(_ number: Number, to key: inout [UInt8]) {
        switch number {
        case .nan:
            key.append(Tag.nan)
        case .infinity(let negative):
            key.append(negative ? Tag.negativeInfinity : Tag.positiveInfinity)
        case .zero:
            key.append(Tag.zero)
        case .finite(let negative, let exponent, let fraction):
            let flip: UInt8 = negative ? 0xFF : 0
            key.append(negative ? Tag.negative : Tag.positive)
            let biased = UInt16(exponent + exponentBias)
            key.append(UInt8(biased >> 8) ^ flip)
            key.append(UInt8(truncatingIfNeeded: biased) ^ flip)
            var remaining = fraction
            repeat {
                let group = UInt8(remaining >> 56)
                remaining = (remaining << 7) & fractionMask
                let more: UInt8 = remaining == 0 ? 0 : 1
                key.append((group << 1 | more) ^ flip)
            } while remaining != 0
        }
    }
}

// MARK: - Strings, data and dates

extension IndexKey {
    /// Whether `text` has only scalars below U+0300 (UTF-8 bytes below 0xCC), which are in NFC and
    /// compose with nothing: its key is its UTF-8 (zero bytes escaped), and Swift's `<` orders it
    /// as keys are ordered against every string whose key is not smaller (see
    /// `QueryExecutor.walkableSortKeys`).
    static func ordersAsSwift(_ text: String) -> Bool {
        text.utf8.withContiguousStorageIfAvailable { bytes in bytes.allSatisfy { $0 < 0xCC } }
            ?? text.utf8.allSatisfy { $0 < 0xCC }
    }

    /// Appends the escaped UTF-8 of the NFC form of `text`, then the terminator.
    private static func appendEscaped(_ text: String, to key: inout [UInt8]) {
        // The standard library's normalizer, not Foundation's `precomposedStringWithCanonicalMapping`: it is the one
        // `String.==` uses, so strings Swift calls equal get equal keys. Foundation's differs for some input on Linux
        // (it leaves "E\u{F73}\u{323}" and the Unicode 16 pair U+1611E U+1611E uncomposed), and keys must not
        // depend on the platform that wrote them.
        // Bytes below 0xCC encode only scalars below U+0300, which are all in NFC and never compose with a neighbor,
        // so such text (all ASCII among it) skips normalization; without zero bytes it needs no escaping either.
        let copied = text.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.allSatisfy({ $0 < 0xCC }) else { return false }
            if bytes.contains(0) {
                for byte in bytes { appendEscaped(byte, to: &key) }
            } else {
                key.append(contentsOf: bytes)
            }
            return true
        }
        if copied != true {
            text._withNFCCodeUnits { appendEscaped($0, to: &key) }
        }
        appendTerminator(to: &key)
    }

    private static func appendEscaped(_ bytes: Data, to key: inout [UInt8]) {
        for byte in bytes { appendEscaped(byte, to: &key) }
        appendTerminator(to: &key)
    }

    private static func appendEscaped(_ byte: UInt8, to key: inout [UInt8]) {
        key.append(byte)
        if byte == 0 { key.append(Escape.zero) }
    }

    private static func appendTerminator(to key: inout [UInt8]) {
        key.append(0)
        key.append(Escape.end)
    }

    /// The key of a NaN date, which every NaN date has: the last key of the date class, after
    /// +infinity's.
    static let nanDate: [UInt8] = {
        let bits = orderedBits(of: .nan)
        return [Tag.date] + stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: bits >> UInt64($0)) }
    }()

    /// The bits of `interval`, transformed so unsigned comparison orders them as the intervals are ordered.
    private static func orderedBits(of interval: TimeInterval) -> UInt64 {
        // -0.0 == 0.0 and NaN payloads carry no order, so both get one key each.
        let canonical = interval.isNaN ? Double.nan : (interval == 0 ? 0 : interval)
        let bits = canonical.bitPattern
        return bits & 1 << 63 == 0 ? bits | 1 << 63 : ~bits
    }
}

// MARK: - Reading

extension IndexKey {
    /// A cursor over key bytes that rejects everything `append(_:to:)` would not have written.
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var position: Int

        mutating func next() throws(IndexKeyError) -> UInt8 {
            guard position < bytes.count else { throw .malformed(at: position, "the key ends inside a value") }
            defer { position += 1 }
            return bytes[position]
        }

        mutating func value() throws(IndexKeyError) -> RecordValue {
            let start = position
            switch try next() {
            case Tag.null: return .null
            case Tag.falseValue: return .bool(false)
            case Tag.trueValue: return .bool(true)
            case Tag.negativeInfinity: return .double(-.infinity)
            case Tag.zero: return .int(0)
            case Tag.positiveInfinity: return .double(.infinity)
            case Tag.nan: return .double(.nan)
            case Tag.negative: return try finite(negative: true, start: start)
            case Tag.positive: return try finite(negative: false, start: start)
            case Tag.string: return .string(try text())
            case Tag.url: return .url(try text())
            case Tag.data: return .data(Data(try unescaped()))
            case Tag.date: return .date(try date())
            case Tag.uuid: return .uuid(try uuid())
            case let tag:
                throw .malformed(at: start, "unknown tag 0x\(String(tag, radix: 16, uppercase: true))")
            }
        }

        /// Moves past one value, whole or cut, checking its structure only.
        mutating func skip() throws(IndexKeyError) -> (isCut: Bool, payload: Int) {
            let start = position
            switch try next() {
            case Tag.null, Tag.falseValue, Tag.trueValue, Tag.negativeInfinity, Tag.zero, Tag.positiveInfinity,
                Tag.nan:
                return (false, 0)
            case Tag.negative, Tag.positive:
                let flip: UInt8 = bytes[start] == Tag.negative ? 0xFF : 0
                // The usual key, read without the checked reader (every index walk finds each
                // key's extent): two exponent bytes, then groups up to the first whose low bit
                // (flipped for a negative number) is clear. A key that ends first, or a number of
                // more groups than a double has, is left to the checked reading below.
                let groups = position &+ 2
                let groupsEnd = Swift.min(bytes.count, groups &+ IndexKey.maxGroups)
                var at = groups
                // Eight groups at a time: the first byte whose low bit (flipped) is clear.
                let wordFlip = UInt64(flip) &* 0x0101_0101_0101_0101
                while at &+ 8 <= groupsEnd {
                    let word = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt64.self)) ^ wordFlip
                    let last = ~word & 0x0101_0101_0101_0101
                    if last != 0 {
                        position = at &+ last.trailingZeroBitCount / 8 &+ 1
                        return (false, 0)
                    }
                    at &+= 8
                }
                while at < groupsEnd {
                    if (bytes[at] ^ flip) & 1 == 0 {
                        position = at &+ 1
                        return (false, 0)
                    }
                    at &+= 1
                }
                _ = try next()
                _ = try next()
                for _ in 0..<IndexKey.maxGroups {
                    if (try next() ^ flip) & 1 == 0 { return (false, 0) }
                }
                throw .malformed(at: position - 1, "number has more than 63 fraction bits")
            case Tag.string, Tag.url, Tag.data:
                let payloadStart = position
                while true {
                    guard try next() == 0 else { continue }
                    let at = position
                    switch try next() {
                    case Escape.zero: continue
                    case Escape.end: return (false, at - 1 - payloadStart)
                    case Escape.cut: return (true, at - 1 - payloadStart)
                    default: throw .malformed(at: at, "a zero byte followed by neither 0xFF, 0x01 nor 0x02")
                    }
                }
            case Tag.date:
                return try skipBytes(8, "a date")
            case Tag.uuid:
                return try skipBytes(16, "a UUID")
            case let tag:
                throw .malformed(at: start, "unknown tag 0x\(String(tag, radix: 16, uppercase: true))")
            }
        }

        private mutating func skipBytes(
            _ count: Int, _ what: String
        ) throws(IndexKeyError) -> (isCut: Bool, payload: Int) {
            guard bytes.count - position >= count else {
                throw .malformed(at: bytes.count, "the key ends inside \(what)")
            }
            position += count
            return (false, 0)
        }

        private mutating func finite(negative: Bool, start: Int) throws(IndexKeyError) -> RecordValue {
            let flip: UInt8 = negative ? 0xFF : 0
            let high = try next() ^ flip
            let low = try next() ^ flip
            let exponent = Int(high) << 8 + Int(low) - IndexKey.exponentBias
            guard exponent <= IndexKey.maxExponent else {
                throw .malformed(at: start + 1, "number exponent \(exponent) is out of range")
            }
            var fraction: UInt64 = 0
            var groups = 0
            while true {
                let at = position
                let byte = try next() ^ flip
                let group = UInt64(byte >> 1)
                fraction |= group << UInt64(56 - 7 * groups)
                groups += 1
                if byte & 1 == 0 {
                    guard group != 0 || groups == 1 else {
                        throw .malformed(at: at, "number ends with a redundant zero group")
                    }
                    break
                }
                guard groups < IndexKey.maxGroups else {
                    throw .malformed(at: at, "number has more than 63 fraction bits")
                }
            }
            // The weight of the lowest one bit decides which Swift type can hold the number exactly.
            let lowest = fraction == 0 ? exponent : exponent - 63 + fraction.trailingZeroBitCount
            if lowest >= 0, exponent < 64 {
                let magnitude = (fraction | 1 << 63) >> UInt64(63 - exponent)
                if !negative, magnitude <= UInt64(Int64.max) { return .int(Int64(magnitude)) }
                if !negative { return .uint(magnitude) }
                if magnitude <= Int64.min.magnitude { return .int(Int64(truncatingIfNeeded: 0 &- magnitude)) }
            }
            guard lowest >= max(exponent - 52, -IndexKey.exponentBias) else {
                throw .malformed(at: start, "number is neither a 64-bit integer nor a Double")
            }
            let significand = Double(bitPattern: (1.0 as Double).bitPattern | fraction >> 11)
            return .double(Double(sign: negative ? .minus : .plus, exponent: exponent, significand: significand))
        }

        private mutating func unescaped() throws(IndexKeyError) -> [UInt8] {
            var result: [UInt8] = []
            while true {
                let byte = try next()
                guard byte == 0 else {
                    result.append(byte)
                    continue
                }
                let at = position
                switch try next() {
                case Escape.zero: result.append(0)
                case Escape.end: return result
                case Escape.cut: throw .malformed(at: at, "the value is cut to its first bytes, not whole")
                default: throw .malformed(at: at, "a zero byte followed by neither 0xFF nor 0x01")
                }
            }
        }

        private mutating func text() throws(IndexKeyError) -> String {
            let start = position
            let bytes = try unescaped()
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw .malformed(at: start, "text is not valid UTF-8")
            }
            guard text._nfcCodeUnits == bytes else {
                throw .malformed(at: start, "text is not in NFC")
            }
            return text
        }

        private mutating func date() throws(IndexKeyError) -> Date {
            let start = position
            var ordered: UInt64 = 0
            for _ in 0..<8 { ordered = ordered << 8 | UInt64(try next()) }
            let bits = ordered & 1 << 63 != 0 ? ordered & ~(1 << 63) : ~ordered
            let interval = Double(bitPattern: bits)
            guard IndexKey.orderedBits(of: interval) == ordered else {
                throw .malformed(at: start, "date is -0.0 or a non-canonical NaN")
            }
            return Date(timeIntervalSinceReferenceDate: interval)
        }

        private mutating func uuid() throws(IndexKeyError) -> UUID {
            guard bytes.count - position >= 16 else {
                throw .malformed(at: bytes.count, "the key ends inside a UUID")
            }
            defer { position += 16 }
            return UUID(uuid: bytes.loadUnaligned(fromByteOffset: position, as: uuid_t.self))
        }
    }
}
