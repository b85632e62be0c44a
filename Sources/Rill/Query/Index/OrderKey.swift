import Foundation

/// Bytes whose `memcmp` order is a sort's order: the index-key encoding of each sort value, each
/// inverted for a descending sort, then the record's identifier key.
///
/// For sorts on stored values that are not strings or decimals (the ones
/// `QueryExecutor.orderPreservingSortKeys` accepts), this order is the sort descriptors' order with
/// ties broken by identifier: rows can then be compared with one `memcmp` instead of reading their
/// models' properties through key paths at every comparison.
enum OrderKey {
    /// The order key of `record`, whose identifier key is `key`.
    static func make(_ record: RecordValue, key: [UInt8], sort: [QuerySortKey]) throws(IndexKeyError) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16 * sort.count + key.count)
        for sortKey in sort {
            let start = bytes.count
            try IndexKey.append(QueryEvaluator.read(sortKey.path, from: record), to: &bytes)
            // Encodings are prefix-free, so inverting one reverses its order within the whole key.
            if !sortKey.ascending {
                for index in start..<bytes.count { bytes[index] = ~bytes[index] }
            }
        }
        bytes += key
        return bytes
    }

    /// The first sixteen bytes of `key` as two big-endian integers, zeros past its end: where the
    /// prefixes of two keys differ, their order is the keys' (`memcmp`) order, since a key that
    /// ends within the sixteen bytes is a prefix of the other up to there, and first. Keys whose
    /// prefixes are equal are ordered by `precedes`.
    @inline(__always)
    static func prefix(_ key: [UInt8]) -> (UInt64, UInt64) {
        key.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return (0, 0) }
            if bytes.count >= 16 {
                return (
                    UInt64(bigEndian: base.loadUnaligned(as: UInt64.self)),
                    UInt64(bigEndian: base.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
                )
            }
            var words: (UInt64, UInt64) = (0, 0)
            withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: bytes) }
            return (UInt64(bigEndian: words.0), UInt64(bigEndian: words.1))
        }
    }

    /// `memcmp` order.
    static func precedes(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        lhs.withUnsafeBufferPointer { left in
            rhs.withUnsafeBufferPointer { right in
                let common = min(left.count, right.count)
                let order = common == 0 ? 0 : memcmp(left.baseAddress!, right.baseAddress!, common)
                return order < 0 || (order == 0 && left.count < right.count)
            }
        }
    }
}
