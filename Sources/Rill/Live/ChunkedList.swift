/// A list kept in chunks, so that inserting or removing one element moves at most one chunk's
/// elements, and a copy that shares storage (a published snapshot) costs the writer only the
/// chunk it changes and the table of chunks, not the whole list.
///
/// Positions are found through the chunks' start offsets: O(log c) for c chunks. Elements should
/// be plain values (see `RowList`): copying a chunk then copies bytes.
struct ChunkedList<Element>: RandomAccessCollection {
    /// Non-empty chunks, in order.
    private var chunks: [[Element]] = []
    /// `starts[i]` is the position of `chunks[i][0]`; one more entry holds the count.
    private var starts: [Int] = [0]

    /// Chunks split when they grow past this.
    static var chunkCapacity: Int { 1024 }

    init() {}

    init<S: Sequence>(_ elements: S) where S.Element == Element {
        var chunk: [Element] = []
        chunk.reserveCapacity(Self.chunkCapacity / 2)
        for element in elements {
            chunk.append(element)
            if chunk.count == Self.chunkCapacity / 2 {
                append(chunk: chunk)
                chunk = []
                chunk.reserveCapacity(Self.chunkCapacity / 2)
            }
        }
        if !chunk.isEmpty { append(chunk: chunk) }
    }

    private mutating func append(chunk: [Element]) {
        chunks.append(chunk)
        starts.append(starts[starts.count - 1] + chunk.count)
    }

    var startIndex: Int { 0 }
    var endIndex: Int { starts[starts.count - 1] }

    subscript(position: Int) -> Element {
        precondition(position >= 0 && position < endIndex, "ChunkedList index out of range")
        let chunk = chunkIndex(containing: position)
        return chunks[chunk][position - starts[chunk]]
    }

    /// The chunk holding `position` (0 ≤ position < count).
    private func chunkIndex(containing position: Int) -> Int {
        var low = 0
        var high = chunks.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if starts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        return low
    }

    /// The first position whose element is not ordered before the probe (`isBefore(element)`
    /// true for a prefix of the list, false after it).
    func partitionPoint(_ isBefore: (Element) -> Bool) -> Int {
        var low = 0
        var high = chunks.count
        // The first chunk whose last element is not before the probe.
        while low < high {
            let middle = (low + high) / 2
            if isBefore(chunks[middle][chunks[middle].count - 1]) { low = middle + 1 } else { high = middle }
        }
        guard low < chunks.count else { return endIndex }
        let chunk = chunks[low]
        var first = 0
        var last = chunk.count
        while first < last {
            let middle = (first + last) / 2
            if isBefore(chunk[middle]) { first = middle + 1 } else { last = middle }
        }
        return starts[low] + first
    }

    mutating func insert(_ element: Element, at position: Int) {
        precondition(position >= 0 && position <= endIndex, "ChunkedList insertion index out of range")
        if chunks.isEmpty {
            append(chunk: [element])
            return
        }
        // At a chunk boundary, prefer the end of the previous chunk.
        let chunk = position == endIndex ? chunks.count - 1 : chunkIndex(containing: position)
        let offset = position - starts[chunk]
        chunks[chunk].insert(element, at: offset)
        for index in (chunk + 1)..<starts.count { starts[index] += 1 }
        if chunks[chunk].count > Self.chunkCapacity {
            let upper = Array(chunks[chunk][(Self.chunkCapacity / 2)...])
            chunks[chunk].removeSubrange((Self.chunkCapacity / 2)...)
            chunks.insert(upper, at: chunk + 1)
            starts.insert(starts[chunk] + chunks[chunk].count, at: chunk + 1)
        }
    }

    @discardableResult
    mutating func remove(at position: Int) -> Element {
        precondition(position >= 0 && position < endIndex, "ChunkedList index out of range")
        let chunk = chunkIndex(containing: position)
        let element = chunks[chunk].remove(at: position - starts[chunk])
        for index in (chunk + 1)..<starts.count { starts[index] -= 1 }
        if chunks[chunk].isEmpty {
            chunks.remove(at: chunk)
            starts.remove(at: chunk)
        }
        return element
    }

    /// Keeps the first `count` elements.
    mutating func truncate(to count: Int) {
        guard count < endIndex else { return }
        if count <= 0 {
            self = ChunkedList()
            return
        }
        let chunk = chunkIndex(containing: count - 1)
        chunks.removeSubrange((chunk + 1)...)
        starts.removeSubrange((chunk + 1)...)
        chunks[chunk].removeSubrange((count - starts[chunk])...)
        starts.append(count)
    }
}

extension ChunkedList: Sendable where Element: Sendable {}
