import Foundation

/// The observers of a live query, by observation number, in the order they were added.
struct LiveObservers {
    var nextID = 0
    var sinks: [(id: Int, sink: LiveSink)] = []
    var finished = false
}
