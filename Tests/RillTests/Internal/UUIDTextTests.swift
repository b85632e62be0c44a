import Foundation
import RillWorkloads
import Testing

@testable import Rill

/// `UUIDText.uuid` gives `UUID(uuidString:)`'s answer for every text: canonical spellings in
/// every case, and texts a character away from one (another character anywhere, one more or one
/// less, signs, spaces, `0x`, digits that are not ASCII), which it leaves to Foundation.
@Suite struct UUIDTextTests {
    static let odd: [String] = [
        " ", "+", "-", "0", "x", "X", "g", "G", "z", "\u{0}", "\t", "\n", "é", "\u{FF10}", "\u{0661}", "\u{1F600}",
    ]

    @Test func writtenAsFoundationSpellsIt() {
        var extremes = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))]
        extremes.append(UUID(uuid: (255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255)))
        for uuid in extremes + (0..<2_000).map({ _ in UUID() }) {
            var output: [UInt8] = [1]
            UUIDText.append(uuid, to: &output)
            #expect(output == [1] + Array(uuid.uuidString.utf8))
            #expect(RecordValue.uuid(uuid).jsonString() == "\"\(uuid.uuidString)\"")
        }
    }

    @Test func everyTextReadsAsFoundationReadsIt() {
        var random = SeededGenerator(label: "uuid text")
        var canonical = 0
        for round in 0..<20_000 {
            var text = UUID().uuidString
            switch round % 3 {
            case 0: text = text.lowercased()
            case 1: text = String(text.map { Bool.random(using: &random) ? Character($0.lowercased()) : $0 })
            default: break
            }
            if round % 2 == 1 {
                var characters = Array(text)
                let at = Int.random(in: 0..<characters.count, using: &random)
                let odd = Character(Self.odd.randomElement(using: &random)!)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: characters[at] = odd
                case 1: characters.insert(odd, at: at)
                case 2: characters.remove(at: at)
                default: characters.insert(contentsOf: ["0", "x"], at: 0)
                }
                text = String(characters)
            } else {
                canonical += 1
                #expect(UUIDText.uuid(text) != nil, "\(text)")
            }
            #expect(UUIDText.uuid(text) == UUID(uuidString: text), "\(text)")
        }
        #expect(canonical == 10_000)
        for text in [
            "", "00000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
            "ffffffff-ffff-ffff-ffff-ffffffffffff", "00000000000000000000000000000000",
            "{00000000-0000-0000-0000-000000000000}",
            "00000000-0000-0000-0000-0000000000000", "0000000-00000-0000-0000-000000000000",
        ] {
            #expect(UUIDText.uuid(text) == UUID(uuidString: text), "\(text)")
        }
    }
}
