import CLMDB
import Foundation
import Rill

extension QueryBenchmark {
    /// Raw LMDB doing the puts of Rill's load: copies Rill's `data.mdb` (byte for byte, while
    /// nothing writes), reads the puts from the copy (`CapturedLoad`) and replays them in one
    /// transaction of a new environment with the same map, not flushed (`MDB_NOSYNC`, as Rill's
    /// `.unsynced`). Returns the seconds of the replay, the puts, and the copy, still open, for the
    /// raw walks of the scans.
    ///
    /// The raw side reads a copy rather than Rill's own file: LMDB forbids opening one file twice
    /// in a process (closing the second handle would drop the locks of the first), and Rill keeps
    /// its store open for the queries that follow, so that Rill's scans and the raw walk can
    /// alternate in rounds. The copy has the same pages in the same order: a cursor walks the
    /// same tree.
    func loadRaw(
        from directory: URL, scratch: URL, mapSize: Int
    ) throws -> (seconds: Double, puts: CapturedLoad, copy: RawLMDB) {
        let copyDirectory = scratch.appendingPathComponent("raw-copy")
        try FileManager.default.createDirectory(at: copyDirectory, withIntermediateDirectories: true)
        try HistoryBenchmark.copyFile(
            directory.appendingPathComponent("data.mdb").path,
            to: copyDirectory.appendingPathComponent("data.mdb").path)
        let copy = RawLMDB(directory: copyDirectory.path, mapSize: mapSize)
        // The databases of Entry's indexes, named after their fields.
        let puts = CapturedLoad(
            from: copy, entity: Entry.entityName, indexes: ["code", "category", "amount"], count: records)

        let loadDirectory = scratch.appendingPathComponent("raw-load")
        defer { try? FileManager.default.removeItem(at: loadDirectory) }
        let replaying = {
            let target = RawLMDB(directory: loadDirectory.path, mapSize: mapSize)
            let rc = mdb_env_set_flags(target.env, UInt32(MDB_NOSYNC), 1)
            precondition(rc == 0, String(cString: mdb_strerror(rc)))
            target.open(["meta", puts.log.database, puts.records.database] + puts.indexes.map(\.database))
            return measure { puts.replay(into: target) }
        }()
        return (replaying, puts, copy)
    }
}
