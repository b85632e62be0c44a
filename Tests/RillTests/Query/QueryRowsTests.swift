import Testing

@testable import Rill

/// The rows a query keeps while reading, against sorting every match and slicing the window.
@Suite struct QueryRowsTests {
    static let extremes: [Int?] = [nil, Int.min, -1, 0, 1, 2, 5, 7, 9_999, 10_000, 10_001, Int.max - 1, Int.max]

    @Test func rowsInOrderAreTheWindowAsTheyCome() {
        for count in [0, 1, 3, 7] {
            let matches = Array(0..<count)
            for offset in Self.extremes {
                for limit in Self.extremes {
                    let window = QueryWindow(offset: offset, limit: limit)
                    var rows = QueryRows<Int>(window: window)
                    var read = 0
                    for match in matches where rows.wantsMore {
                        read += 1
                        if !rows.add(match) { break }
                    }
                    let expected = Array(matches[window.range(in: count)])
                    #expect(rows.results() == expected, "\(count) \(offset as Any) \(limit as Any)")
                    // Reading stops at the window's end, and does not start for an empty window.
                    let wanted = window.isEmpty ? 0 : min(count, window.end ?? count)
                    #expect(read == wanted, "\(count) \(offset as Any) \(limit as Any)")
                }
            }
        }
    }

    @Test func rowsInAnyOrderAreSortedThenCut() {
        var generator = SystemRandomNumberGenerator()
        for count in [0, 1, 3, 7, 40] {
            let matches = (0..<count).map { _ in Int.random(in: 0..<10, using: &generator) }
            let sorted = matches.sorted()
            for offset in Self.extremes {
                for limit in Self.extremes {
                    let window = QueryWindow(offset: offset, limit: limit)
                    var rows = QueryRows<Int>(window: window, ordering: <)
                    for match in matches where rows.wantsMore { _ = rows.add(match) }
                    #expect(
                        rows.results() == Array(sorted[window.range(in: count)]),
                        "\(matches) \(offset as Any) \(limit as Any)")
                }
            }
        }
    }
}
