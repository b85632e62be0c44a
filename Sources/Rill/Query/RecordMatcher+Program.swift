import Foundation

extension RecordMatcher {
    /// One test of the program, of plain values: its operands follow it, up to `end`.
    struct Instruction {
        enum Kind: UInt8 {
            case compare, compareFields, compareExpressions, compareCount, anyElement, allElements, isIn, between
            case text, and, or, not, unknown
            /// A `compare` of a top-level field with the Double constant `double`, which is not
            /// NaN: decided on a stored Double without making a `StoredValue` (`compareDouble`).
            case compareDouble
        }
        var kind: Kind
        var comparison = QueryComparison.equal
        /// The slot of the field's top-level name, and the range of `strings` naming the rest of
        /// its path.
        var slot = 0
        var path = 0..<0
        /// The other field of `compareFields`, as `slot` and `path`.
        var otherSlot = 0
        var otherPath = 0..<0
        /// The range of `constants` compared with: one for a comparison, two for `between`.
        var constants = 0..<0
        /// The range of the program's `nodes` holding the two sides of `compareExpressions`.
        var expressions = 0..<0
        var test = QueryStringTest.contains
        /// The range of `pool` holding a string test's pattern.
        var pattern = 0..<0
        var foldsCase = false
        var hasOptions = false
        /// The range of `pool` holding a string test's pattern as written, its options, and
        /// whether every text is tested as a `String` (see `TextTest`).
        var written = 0..<0
        var options = QueryStringOptions()
        var needsStrings = false
        /// The constant of `compareDouble`.
        var double = 0.0
        /// The index just past this instruction's operands.
        var end = 0
    }

    /// A matcher's instructions, constants and byte strings, read through pointers that are valid
    /// only inside `RecordMatcher.withProgram`, with its scratch offsets and what it learned of
    /// the records' keys: deciding a record allocates nothing and touches no reference counts,
    /// but for the `String`s made of text that is not ASCII.
    struct Program {
        /// A constant of the program: text as a range of `pool`.
        enum Constant {
            case null
            case bool(Bool)
            case number(Number)
            case text(Range<Int>)
            case date(Double)
        }

        /// A node of a side of `compareExpressions`, of plain values: its operands follow it, up
        /// to `end`.
        struct Node {
            enum Kind: UInt8 { case field, number, arithmetic, negate }
            var kind: Kind
            var op = QueryArithmetic.add
            var slot = 0
            var path = 0..<0
            var number = Number.int(0)
            var end = 0
        }

        let code: UnsafeBufferPointer<Instruction>
        let constants: UnsafeBufferPointer<Constant>
        let nodes: UnsafeBufferPointer<Node>
        let pool: UnsafeBufferPointer<UInt8>
        let strings: UnsafeBufferPointer<Range<Int>>
        let slots: UnsafeMutableBufferPointer<Int>
        let memo: UnsafeMutableBufferPointer<KeyMemo>

        /// The range of `pool` holding the bytes every matching record holds
        /// (`RecordMatcher.required`): the last of `strings`.
        @inline(__always)
        private var required: Range<Int> { strings[strings.count &- 1] }

        /// The offset of a quantifier's current element (`Operand.elementSlot`): just past `slots`.
        /// (Not a stored pointer: the program is copied for every record, through `memcpy` when it
        /// is larger than 128 bytes.)
        @inline(__always)
        private var element: UnsafeMutablePointer<Int> { slots.baseAddress.unsafelyUnwrapped + slots.count }

        /// The offset of the value in `slot`: a field's, or the current element's.
        @inline(__always)
        private func offset(_ slot: Int) -> Int { slot < 0 ? element.pointee : slots[slot] }

        /// Decides `bytes`, a stored record.
        @inline(__always)
        func decide(_ bytes: UnsafeRawBufferPointer) -> Decision {
            let required = self.required
            if !required.isEmpty,
                !RecordMatcher.search(
                    .contains, in: bytes, for: UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: pool[required])),
                    foldsCase: false)
            {
                return .no
            }
            let reader = RecordReader(bytes)
            guard RecordMatcher.locate(names: pool, ranges: strings, in: reader, slots: slots, memo: memo)
            else {
                return .unknown
            }
            // The one comparison, as in `amount > 99990.0`, without a call to `evaluate`.
            let first = code.baseAddress.unsafelyUnwrapped
            if first.pointee.kind == .compareDouble, let decision = compareDouble(first, reader) { return decision }
            return evaluate(0, reader)
        }

        private func evaluate(_ index: Int, _ reader: RecordReader) -> Decision {
            // A pointer: the instruction is too large to copy for every record.
            let instruction = code.baseAddress.unsafelyUnwrapped + index
            switch instruction.pointee.kind {
            case .compare, .compareDouble:
                if instruction.pointee.kind == .compareDouble, let decision = compareDouble(instruction, reader) {
                    return decision
                }
                return compare(
                    instruction.pointee.comparison, value(instruction, reader),
                    constants[instruction.pointee.constants.lowerBound], reader)
            case .compareFields:
                let other = RecordMatcher.value(
                    at: offset(instruction.pointee.otherSlot), path: instruction.pointee.otherPath, names: pool,
                    ranges: strings,
                    in: reader)
                return compareStored(instruction.pointee.comparison, value(instruction, reader), other, reader)
            case .compareExpressions:
                let lhs = compute(instruction.pointee.expressions.lowerBound, reader)
                let rhs = compute(nodes[instruction.pointee.expressions.lowerBound].end, reader)
                return compareStored(instruction.pointee.comparison, lhs, rhs, reader)
            case .compareCount:
                guard let count = RecordMatcher.count(at: rawOffset(instruction, reader), in: reader) else {
                    return .unknown
                }
                return compare(
                    instruction.pointee.comparison, .number(.int(Int64(count))),
                    constants[instruction.pointee.constants.lowerBound], reader)
            case .anyElement, .allElements:
                return quantify(instruction, at: index, reader)
            case .isIn:
                let stored = value(instruction, reader)
                var unknown = false
                for constant in instruction.pointee.constants {
                    switch compare(.equal, stored, constants[constant], reader) {
                    case .yes: return .yes
                    case .unknown: unknown = true
                    case .no: break
                    }
                }
                return unknown ? .unknown : .no
            case .between:
                let stored = value(instruction, reader)
                let lower = compare(
                    .greaterOrEqual, stored, constants[instruction.pointee.constants.lowerBound], reader)
                if lower == .no { return .no }
                let upper = compare(
                    .lessOrEqual, stored, constants[instruction.pointee.constants.lowerBound + 1], reader)
                if upper == .no { return .no }
                return lower == .yes && upper == .yes ? .yes : .unknown
            case .text:
                return test(instruction, value(instruction, reader), reader)
            case .and, .or:
                // The answer that ends the walk: false for `and`, true for `or`.
                let decisive: Decision = instruction.pointee.kind == .and ? .no : .yes
                var unknown = false
                var operand = index + 1
                while operand < instruction.pointee.end {
                    let decision = evaluate(operand, reader)
                    if decision == decisive { return decisive }
                    if decision == .unknown { unknown = true }
                    operand = code[operand].end
                }
                return unknown ? .unknown : (decisive == .no ? .yes : .no)
            case .not:
                switch evaluate(index + 1, reader) {
                case .yes: return .no
                case .no: return .yes
                case .unknown: return .unknown
                }
            case .unknown:
                return .unknown
            }
        }

        @inline(__always)
        private func value(_ instruction: UnsafePointer<Instruction>, _ reader: RecordReader) -> StoredValue {
            RecordMatcher.value(
                at: offset(instruction.pointee.slot), path: instruction.pointee.path, names: pool, ranges: strings,
                in: reader)
        }

        /// `stored op constant`, as `QueryEvaluator.compare` has it. Every order is antisymmetric,
        /// so a query's `constant op stored` is this test of the mirrored `op`.
        private func compare(
            _ comparison: QueryComparison, _ stored: StoredValue, _ constant: Constant, _ reader: RecordReader
        ) -> Decision {
            let order: ComparisonResult?
            switch (stored, constant) {
            case (.unknown, _):
                return .unknown
            case (.null, .null):
                return Self.decideNull(comparison, true)
            case (.null, _), (_, .null):
                return Self.decideNull(comparison, false)
            case (.number(let a), .number(let b)):
                order = Number.compare(a, b)
            case (.decimal, .number), (.uuid, .text):
                return .unknown
            case (.text(let range, _), .text(let constant)):
                guard let result = orderText(range, constant, reader) else { return .unknown }
                order = result
            case (.bool(let a), .bool(let b)):
                order = a == b ? .orderedSame : (!a ? .orderedAscending : .orderedDescending)
            case (.date(let a), .date(let b)):
                // As `Date` compares its intervals.
                if a.isNaN || b.isNaN { return Self.decideUnorderedDates(comparison) }
                order = a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
            default:
                order = nil
            }
            return Self.decide(comparison, order)
        }

        /// The offset of the value of the instruction's field; `RecordReader.missingValue` when it
        /// reads as null without being stored (missing, or under a value that is not a map); nil
        /// when it is unknown (a path through an array, which the evaluator maps over).
        @inline(__always)
        private func rawOffset(_ instruction: UnsafePointer<Instruction>, _ reader: RecordReader) -> Int? {
            RecordMatcher.offset(
                at: offset(instruction.pointee.slot), path: instruction.pointee.path, names: pool, ranges: strings,
                in: reader)
        }

        /// The value of the side of a comparison at `nodes[index]`, as `QueryEvaluator` computes
        /// it: a field as stored; arithmetic by `QueryEvaluator.arithmetic` on two numbers, null
        /// when an operand is anything else but a decimal (which the evaluator reads from its
        /// text: unknown here).
        private func compute(_ index: Int, _ reader: RecordReader) -> StoredValue {
            let node = nodes[index]
            switch node.kind {
            case .field:
                return RecordMatcher.value(
                    at: offset(node.slot), path: node.path, names: pool, ranges: strings, in: reader)
            case .number:
                return .number(node.number)
            case .negate:
                let operand = compute(index + 1, reader)
                guard case .number(let number) = operand else { return Self.arithmeticOperand(operand) }
                return Self.stored(QueryEvaluator.arithmetic(.subtract, .int(0), number.recordValue))
            case .arithmetic:
                let lhs = compute(index + 1, reader)
                let rhs = compute(nodes[index + 1].end, reader)
                guard case .number(let a) = lhs, case .number(let b) = rhs else {
                    let left = Self.arithmeticOperand(lhs)
                    let right = Self.arithmeticOperand(rhs)
                    if case .unknown = left { return .unknown }
                    if case .unknown = right { return .unknown }
                    return .null
                }
                return Self.stored(QueryEvaluator.arithmetic(node.op, a.recordValue, b.recordValue))
            }
        }

        /// What arithmetic makes of an operand that is not a number: unknown for a decimal (or
        /// anything unknown), null otherwise.
        private static func arithmeticOperand(_ value: StoredValue) -> StoredValue {
            switch value {
            case .unknown, .decimal: return .unknown
            default: return .null
            }
        }

        /// A result of `QueryEvaluator.arithmetic`: a number or null.
        private static func stored(_ value: RecordValue) -> StoredValue {
            Number(value).map(StoredValue.number) ?? .null
        }

        /// `any`/`all` of the stored array: the body (the instruction after `index`) tested on each
        /// element, as `QueryEvaluator` has it: a value that is not an array has no element (`any`
        /// false, `all` true).
        private func quantify(
            _ instruction: UnsafePointer<Instruction>, at index: Int, _ reader: RecordReader
        ) -> Decision {
            let all = instruction.pointee.kind == .allElements
            guard let offset = rawOffset(instruction, reader) else { return .unknown }
            let empty: Decision = all ? .yes : .no
            guard offset != RecordReader.missingValue else { return empty }
            do {
                guard try reader.byte(at: offset) == RecordFormat.Tag.arrayBegin else { return empty }
                var position = offset + 1
                var unknown = false
                while try reader.byte(at: position) != RecordFormat.Tag.end {
                    element.pointee = position
                    switch evaluate(index + 1, reader) {
                    case .yes: if !all { return .yes }
                    case .no: if all { return .no }
                    case .unknown: unknown = true
                    }
                    position = try reader.skipValue(at: position, depth: 1)
                }
                return unknown ? .unknown : empty
            } catch {
                return .unknown
            }
        }

        /// `lhs op rhs` of two stored values, as `QueryEvaluator.compare` has it: `compare`'s
        /// cases with a stored value on both sides, and unknown for the kinds read only as tags
        /// (decimals with numbers or each other, UUIDs with text or each other, data, arrays and
        /// maps with each other).
        private func compareStored(
            _ comparison: QueryComparison, _ lhs: StoredValue, _ rhs: StoredValue, _ reader: RecordReader
        ) -> Decision {
            let order: ComparisonResult?
            switch (lhs, rhs) {
            case (.unknown, _), (_, .unknown):
                return .unknown
            case (.null, .null):
                return Self.decideNull(comparison, true)
            case (.null, _), (_, .null):
                return Self.decideNull(comparison, false)
            case (.number(let a), .number(let b)):
                order = Number.compare(a, b)
            case (.decimal, .number), (.number, .decimal), (.decimal, .decimal), (.uuid, .text), (.text, .uuid),
                (.uuid, .uuid), (.other, .other):
                return .unknown
            case (.text(let a, _), .text(let b, _)):
                order = Self.orderText(
                    UnsafeRawBufferPointer(rebasing: reader.bytes[a]), UnsafeRawBufferPointer(rebasing: reader.bytes[b])
                )
            case (.bool(let a), .bool(let b)):
                order = a == b ? .orderedSame : (!a ? .orderedAscending : .orderedDescending)
            case (.date(let a), .date(let b)):
                // As `Date` compares its intervals.
                if a.isNaN || b.isNaN { return Self.decideUnorderedDates(comparison) }
                order = a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
            default:
                order = nil
            }
            return Self.decide(comparison, order)
        }

        /// Whether `comparison` holds of two values in `order` (nil: unordered, as NaN is).
        @inline(__always)
        private static func decide(_ comparison: QueryComparison, _ order: ComparisonResult?) -> Decision {
            let holds: Bool
            switch comparison {
            case .equal: holds = order == .orderedSame
            case .notEqual: holds = order != .orderedSame
            case .less: holds = order == .orderedAscending
            case .lessOrEqual: holds = order == .orderedAscending || order == .orderedSame
            case .greater: holds = order == .orderedDescending
            case .greaterOrEqual: holds = order == .orderedDescending || order == .orderedSame
            }
            return holds ? .yes : .no
        }

        /// Whether `comparison` holds of two dates one of which is NaN: `Date`'s `<=` and `>=`
        /// are `!(b < a)` and `!(a < b)`, so they hold, as `!=` does (`QueryValueOrder.unorderedDates`).
        private static func decideUnorderedDates(_ comparison: QueryComparison) -> Decision {
            switch comparison {
            case .notEqual, .lessOrEqual, .greaterOrEqual: return .yes
            case .equal, .less, .greater: return .no
            }
        }

        /// `compareDouble` decided without making a `StoredValue` when the field is stored as a
        /// Double that is not NaN; nil for any other value (which `compare` decides, as it would
        /// have this one).
        @inline(__always)
        private func compareDouble(_ instruction: UnsafePointer<Instruction>, _ reader: RecordReader) -> Decision? {
            let offset = self.offset(instruction.pointee.slot)
            let bytes = reader.bytes
            guard offset != RecordReader.missingValue, offset &+ 9 <= bytes.count, let base = bytes.baseAddress,
                base.load(fromByteOffset: offset, as: UInt8.self) == RecordFormat.Tag.double
            else { return nil }
            let stored = Double(
                bitPattern: UInt64(littleEndian: base.loadUnaligned(fromByteOffset: offset &+ 1, as: UInt64.self)))
            guard !stored.isNaN else { return nil }
            let constant = instruction.pointee.double
            let order: ComparisonResult =
                stored == constant ? .orderedSame : (stored < constant ? .orderedAscending : .orderedDescending)
            return Self.decide(instruction.pointee.comparison, order)
        }

        /// A comparison with null on one side at least: only equality has an answer other than false.
        private static func decideNull(_ comparison: QueryComparison, _ bothNull: Bool) -> Decision {
            switch comparison {
            case .equal: return bothNull ? .yes : .no
            case .notEqual: return bothNull ? .no : .yes
            default: return .no
            }
        }

        /// The order of the stored text in `range` and the ASCII constant in `pool[constant]`;
        /// nil unless the stored text is ASCII too (then the order of the bytes is `String`'s).
        private func orderText(
            _ range: Range<Int>, _ constant: Range<Int>, _ reader: RecordReader
        ) -> ComparisonResult? {
            Self.orderText(
                UnsafeRawBufferPointer(rebasing: reader.bytes[range]),
                UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: pool[constant])))
        }

        /// `String`'s order of two valid UTF-8 texts: of the bytes when both are ASCII, else of
        /// the `String`s made of them (`QueryValueOrder`'s `==`, then `<`).
        private static func orderText(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> ComparisonResult
        {
            if RecordMatcher.isASCII(lhs), RecordMatcher.isASCII(rhs) { return order(lhs, rhs) }
            let a = String(decoding: lhs, as: UTF8.self)
            let b = String(decoding: rhs, as: UTF8.self)
            return a == b ? .orderedSame : (a < b ? .orderedAscending : .orderedDescending)
        }

        /// The order of two byte strings, byte by byte, then by length: `String`'s order for ASCII.
        private static func order(_ lhs: UnsafeRawBufferPointer, _ rhs: UnsafeRawBufferPointer) -> ComparisonResult {
            let common = min(lhs.count, rhs.count)
            let prefix = common == 0 ? 0 : memcmp(lhs.baseAddress!, rhs.baseAddress!, common)
            if prefix != 0 { return prefix < 0 ? .orderedAscending : .orderedDescending }
            if lhs.count == rhs.count { return .orderedSame }
            return lhs.count < rhs.count ? .orderedAscending : .orderedDescending
        }

        /// A string test on a stored value: false unless it is a string (a URL is not one here,
        /// as in `QueryEvaluator`).
        private func test(
            _ instruction: UnsafePointer<Instruction>, _ stored: StoredValue, _ reader: RecordReader
        ) -> Decision {
            switch stored {
            case .unknown: return .unknown
            case .text(let range, let isURL) where !isURL:
                let bytes = UnsafeRawBufferPointer(rebasing: reader.bytes[range])
                if instruction.pointee.needsStrings || !RecordMatcher.isASCII(bytes) {
                    let written = UnsafeRawBufferPointer(
                        UnsafeBufferPointer(rebasing: pool[instruction.pointee.written]))
                    let found = StringMatching.matches(
                        instruction.pointee.test, String(decoding: bytes, as: UTF8.self),
                        String(decoding: written, as: UTF8.self), instruction.pointee.options)
                    return found ? .yes : .no
                }
                if instruction.pointee.pattern.isEmpty { return instruction.pointee.hasOptions ? .no : .yes }
                let pattern = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: pool[instruction.pointee.pattern]))
                let found = RecordMatcher.search(
                    instruction.pointee.test, in: bytes, for: pattern, foldsCase: instruction.pointee.foldsCase)
                return found ? .yes : .no
            default: return .no
            }
        }
    }
}
