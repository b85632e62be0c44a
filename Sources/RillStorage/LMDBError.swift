import CLMDB

/// An error reported by LMDB, or by the storage layer before LMDB would have seen bad input.
///
/// The code is LMDB's own (`MDB_*`) or an `errno` value; `message` is LMDB's text for it,
/// sometimes followed by what the storage layer was doing.
package struct LMDBError: Error, Equatable, CustomStringConvertible {
    /// LMDB's return code (`MDB_*`) or an `errno` value.
    package let code: Int32
    /// A human-readable explanation.
    package let message: String

    package init(code: Int32, message: String? = nil) {
        self.code = code
        self.message = message ?? String(cString: mdb_strerror(code))
    }

    package var description: String { "LMDB error \(code): \(message)" }

    package static func == (lhs: LMDBError, rhs: LMDBError) -> Bool { lhs.code == rhs.code }

    // MARK: - Codes that callers act on

    package static let notFound = LMDBError(code: MDB_NOTFOUND)
    package static let keyExists = LMDBError(code: MDB_KEYEXIST)
    package static let mapFull = LMDBError(code: MDB_MAP_FULL)
    package static let mapResized = LMDBError(code: MDB_MAP_RESIZED)
    package static let transactionFull = LMDBError(code: MDB_TXN_FULL)
    package static let readersFull = LMDBError(code: MDB_READERS_FULL)
    package static let panic = LMDBError(code: MDB_PANIC)
    package static let invalid = LMDBError(code: MDB_INVALID)
    /// `MDB_DBS_FULL`: the environment's limit of named databases is reached.
    package static let databasesFull = LMDBError(code: MDB_DBS_FULL)
    package static let versionMismatch = LMDBError(code: MDB_VERSION_MISMATCH)
    package static let badValueSize = LMDBError(code: MDB_BAD_VALSIZE)
    /// `MDB_CORRUPTED`: the file is damaged (also thrown before LMDB maps a file cut short).
    package static let corrupted = LMDBError(code: MDB_CORRUPTED)
}

/// Turns an LMDB return code into a thrown `LMDBError`.
@inline(__always)
package func check(_ rc: Int32, _ context: @autoclosure () -> String? = nil) throws {
    guard rc != 0 else { return }
    if let context = context() {
        throw LMDBError(code: rc, message: "\(String(cString: mdb_strerror(rc))) (\(context))")
    }
    throw LMDBError(code: rc)
}
