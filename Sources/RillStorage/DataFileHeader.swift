import CLMDB
import Foundation

/// What the two meta pages at the start of an LMDB data file say about the file, read before
/// LMDB maps it.
///
/// LMDB trusts its file: it maps `data.mdb` and touches whatever page its meta page and B-trees
/// name. A file cut short (a copy that stopped, a full disk during a copy, a damaged backup) then
/// kills the process with `SIGBUS` on the first read of a page past the end, before any error can
/// be returned. Comparing the file's size with the last page number the current meta page
/// records, before `mdb_env_open`, turns that into an error.
///
/// The layout read here is LMDB's (`mdb.c`, data version 1, 64-bit): each meta page is a 16-byte
/// page header, then `MDB_meta` — magic, version, address, map size, the two core `MDB_db`s of
/// 48 bytes each (the first one's `md_pad` holds the page size), the last page number, the
/// transaction id.
struct DataFileHeader {
    /// The page size the file was written with.
    let pageSize: Int
    /// The last page number in use, according to the meta page with the higher transaction id.
    let lastPage: UInt64
    /// The transaction id of that meta page.
    let transactionID: UInt64

    private static let pageHeaderSize = 16
    private static let metaSize = 136
    private static let magic: UInt32 = 0xBEEF_C0DE
    private static let dataVersion: UInt32 = 1
    private static let metaFlag: UInt16 = 0x08

    /// Throws when `data.mdb` in `directory` is shorter than its meta pages say.
    ///
    /// A missing file is left to LMDB (it creates it), and so is an empty one when `creating`
    /// (LMDB's own path for a new file). Meta pages that are not LMDB's (another program's file, a
    /// damaged header) are left to LMDB too, which reports `MDB_INVALID` or
    /// `MDB_VERSION_MISMATCH` without mapping anything.
    ///
    /// - Throws: `LMDBError` with code `MDB_CORRUPTED` naming the file.
    static func checkSize(directory: String, creating: Bool) throws {
        let path = directory + "/data.mdb"
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        func fileSize() -> UInt64? {
            var info = stat()
            return fstat(fd, &info) == 0 ? UInt64(info.st_size) : nil
        }
        // The meta pages are read before the size: another process may be committing, and LMDB
        // writes a commit's pages before the meta page naming them, so a size read after a meta
        // page covers what it names (read first, it could predate pages the meta page names).
        guard let first = readMeta(fd, at: 0) else {
            if fileSize() == 0, !creating { throw corrupted("\(path) is empty: it holds no meta page") }
            return
        }
        guard first.pageSize >= 512, first.pageSize.nonzeroBitCount == 1 else { return }
        func checkBothMetaPagesFit(_ size: UInt64) throws {
            guard size >= 2 * UInt64(first.pageSize) else {
                throw corrupted(
                    "\(path) is \(size) bytes, shorter than its two meta pages of \(first.pageSize) bytes: it was cut short"
                )
            }
        }
        guard let second = readMeta(fd, at: first.pageSize) else {
            if let size = fileSize() { try checkBothMetaPagesFit(size) }
            return
        }
        guard let size = fileSize() else { return }
        try checkBothMetaPagesFit(size)
        // LMDB uses the meta page with the higher transaction id (mdb_env_pick_meta).
        let current = second.transactionID > first.transactionID ? second : first
        let (pages, overflow) = current.lastPage.addingReportingOverflow(1)
        let (needed, tooLarge) = pages.multipliedReportingOverflow(by: UInt64(first.pageSize))
        guard !overflow, !tooLarge, size >= needed else {
            let claim = overflow || tooLarge ? "more than 2^64 bytes" : "\(needed) bytes"
            throw corrupted(
                "\(path) is \(size) bytes, but its meta page (transaction \(current.transactionID)) names page "
                    + "\(current.lastPage) of \(first.pageSize) bytes as its last, so it needs \(claim): "
                    + "the file was cut short")
        }
    }

    /// The meta page at `offset`, or nil when it is not an LMDB meta page of this layout.
    private static func readMeta(_ fd: Int32, at offset: Int) -> DataFileHeader? {
        var buffer = [UInt8](repeating: 0, count: pageHeaderSize + metaSize)
        let count = buffer.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(offset)) }
        guard count == buffer.count else { return nil }
        return buffer.withUnsafeBytes { raw -> DataFileHeader? in
            func load<T: FixedWidthInteger>(_ at: Int, as: T.Type) -> T {
                T(littleEndian: raw.loadUnaligned(fromByteOffset: at, as: T.self))
            }
            let meta = pageHeaderSize
            guard load(10, as: UInt16.self) & metaFlag != 0,
                load(meta, as: UInt32.self) == magic,
                load(meta + 4, as: UInt32.self) == dataVersion
            else { return nil }
            return DataFileHeader(
                pageSize: Int(load(meta + 24, as: UInt32.self)),
                lastPage: load(meta + 120, as: UInt64.self),
                transactionID: load(meta + 128, as: UInt64.self))
        }
    }

    private static func corrupted(_ message: String) -> LMDBError {
        LMDBError(code: MDB_CORRUPTED, message: message)
    }
}
