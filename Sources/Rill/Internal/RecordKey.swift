/// A record's key as the key of a small table made while a commit is applied, hashed in one
/// pass (`KeyHash`): `[UInt8]` as a key feeds its hasher one byte at a time.
struct RecordKey: Hashable {
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func hash(into hasher: inout Hasher) {
        hasher.combine(bytes.withUnsafeBytes { KeyHash.hash($0) })
    }

    static func == (lhs: RecordKey, rhs: RecordKey) -> Bool { lhs.bytes == rhs.bytes }
}
