import Foundation

/// The observers of a live query, by observation number, in the order they were added.
struct LiveObservers {
    var nextID = 0
    /// Each sink, with the number of the last publication it was told of before it was added
    /// (it is posted only the changes of later ones).
    var sinks: [(id: Int, sink: LiveSink, after: Int)] = []
    var finished = false
}
