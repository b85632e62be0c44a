import Rill
import RillService

/// NDJSON, the shapes of Protocol.md.
struct JSONRendering: WatchRendering {
    func results(_ rows: [QueryRow], sequence: UInt64) -> String {
        RecordLiveQuery.resultsJSON(rows, sequence: sequence).jsonString() + "\n"
    }

    func change(_ change: ResultsChange<QueryRow>) -> String {
        RecordLiveQuery.changeJSON(change).jsonString() + "\n"
    }

    /// `{"seq":N}`: commits up to N went by without changing the results.
    func progress(_ sequence: UInt64) -> String {
        RecordLiveQuery.progressJSON(sequence: sequence).jsonString() + "\n"
    }
}
