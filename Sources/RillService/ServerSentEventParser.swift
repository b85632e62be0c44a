/// Reads a stream of Server-Sent Events back into ``ServerSentEvent``s, line by line: the framing
/// of ``ServerSentEvent/framed``, and what any server may send besides (comments, a field without
/// a space after its colon, data on several lines, lines ending in CR LF).
package struct ServerSentEventParser: Sendable {
    private var event = ServerSentEvent()
    private var hasData = false

    /// A parser at the start of a stream.
    package init() {}

    /// Takes the next line of the stream, without its line feed; returns the event that a blank
    /// line completes, when it has data (an event without data is not dispatched).
    package mutating func take(line: String) -> ServerSentEvent? {
        var line = line
        if line.hasSuffix("\r") { line.removeLast() }
        if line.isEmpty {
            defer {
                event = ServerSentEvent()
                hasData = false
            }
            return hasData ? event : nil
        }
        if line.hasPrefix(":") { return nil }
        let (field, value) =
            line.firstIndex(of: ":").map { index in
                (String(line[..<index]), String(line[line.index(after: index)...].drop { $0 == " " }))
            } ?? (line, "")
        switch field {
        case "event": event.name = value
        case "id": event.id = value
        case "data":
            event.data += hasData ? "\n" + value : value
            hasData = true
        default: break
        }
        return nil
    }
}
