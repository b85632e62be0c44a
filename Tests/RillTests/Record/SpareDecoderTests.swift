import Foundation
import RillLocks
import RillTestSupport
import RillWorkloads
import Testing

@testable import Rill

/// The root decoder fetches share (`SpareDecoder`): one-row fetches and lookups by identifier of
/// two model types, from several threads at once, give what a decode of the stored record with a
/// decoder of its own gives; and models that keep their container or their decoder read their
/// own records with it once every fetch is done.
@Suite struct SpareDecoderTests {
    let directory = TemporaryDirectory()

    struct Plain: PersistentModel, Equatable {
        var id: Int
        var code: Int
        var name: String
        var amount: Double
        static let indexes: [ModelIndex<Plain>] = [ModelIndex(\.code)]
    }

    /// Keeps the keyed container of its record when its code is even, and its decoder when the
    /// code is a multiple of 3.
    struct Keeper: PersistentModel, @unchecked Sendable {
        // Sendable: what it keeps of its decoding is read once every thread is done.
        var id: Int
        var code: Int
        var label: String
        var container: KeyedDecodingContainer<CodingKeys>?
        var decoder: (any Decoder)?

        enum CodingKeys: String, CodingKey { case id, code, label }

        static let indexes: [ModelIndex<Keeper>] = [ModelIndex(\.code)]

        init(id: Int, code: Int, label: String) {
            self.id = id
            self.code = code
            self.label = label
        }

        init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            id = try container.decode(Int.self, forKey: .id)
            code = try container.decode(Int.self, forKey: .code)
            label = try container.decode(String.self, forKey: .label)
            if code.isMultiple(of: 2) { self.container = container }
            if code.isMultiple(of: 3) { self.decoder = decoder }
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(id, forKey: .id)
            try container.encode(code, forKey: .code)
            try container.encode(label, forKey: .label)
        }

        /// The code and label read again through what the model kept.
        func reread() throws -> [String] {
            var read: [String] = []
            if let container {
                let code = try container.decode(Int.self, forKey: .code)
                read.append("\(code) \(try container.decode(String.self, forKey: .label))")
            }
            if let decoder {
                let again = try decoder.container(keyedBy: CodingKeys.self)
                read.append(
                    "\(try again.decode(Int.self, forKey: .code)) \(try again.decode(String.self, forKey: .label))")
            }
            return read
        }
    }

    @Test func threadsFetchingOneRowEachReadTheirOwnRecords() throws {
        let seed = SeededGenerator(label: "spare decoder").seed
        let container = try ModelContainer(
            for: Plain.self, Keeper.self,
            configurations: ModelConfiguration(url: directory.url.appendingPathComponent("store")))
        let count = 200
        let setup = ModelContext(container)
        for id in 0..<count {
            setup.insert(Plain(id: id, code: id * 7 % count, name: "plain \(id)", amount: Double(id) / 4))
            setup.insert(Keeper(id: id, code: id * 11 % count, label: "keeper \(id)"))
        }
        try setup.save()

        let threads = 4
        let failures = Lock<[String]>([])
        let kept = Lock<[Keeper]>([])
        DispatchQueue.concurrentPerform(iterations: threads) { thread in
            var random = SeededGenerator(seed: seed &+ UInt64(thread))
            let context = ModelContext(container)
            for round in 0..<600 {
                let code = Int.random(in: 0..<count, using: &random)
                let label = "thread \(thread), round \(round), seed \(seed)"
                do {
                    switch Int.random(in: 0..<4, using: &random) {
                    case 0:
                        let found = try context.fetch(FetchDescriptor<Plain>(predicate: #Predicate { $0.code == code }))
                        let id = (0..<count).first { $0 * 7 % count == code }!
                        let expected = Plain(id: id, code: code, name: "plain \(id)", amount: Double(id) / 4)
                        if found != [expected] { failures.withLock { $0.append("\(label): \(found)") } }
                    case 1:
                        let found = try context.fetch(
                            FetchDescriptor<Keeper>(predicate: #Predicate { $0.code == code }))
                        let id = (0..<count).first { $0 * 11 % count == code }!
                        if found.map({ "\($0.id) \($0.code) \($0.label)" }) != ["\(id) \(code) keeper \(id)"] {
                            failures.withLock { $0.append("\(label): \(found.map(\.label))") }
                        }
                        kept.withLock { $0 += found.filter { $0.container != nil || $0.decoder != nil } }
                    case 2:
                        let model = try context.model(Plain.self, id: code)
                        if model?.name != "plain \(code)" {
                            failures.withLock { $0.append("\(label): \(String(describing: model))") }
                        }
                    default:
                        let model = try context.model(Keeper.self, id: code)
                        if model?.label != "keeper \(code)" {
                            failures.withLock { $0.append("\(label): \(String(describing: model))") }
                        }
                        if let model, model.container != nil || model.decoder != nil {
                            kept.withLock { $0.append(model) }
                        }
                    }
                } catch {
                    failures.withLock { $0.append("\(label): \(error)") }
                }
            }
        }
        let found = failures.withLock { $0 }
        #expect(found.count == 0, "the first: \(found.prefix(5))")
        // What the models kept reads their own records, once every fetch is done and the pages
        // they were read from have been read again by others.
        let keepers = kept.withLock { $0 }
        #expect(keepers.count > 100)
        for keeper in keepers {
            let reread = try keeper.reread()
            #expect(!reread.isEmpty)
            #expect(reread.allSatisfy { $0 == "\(keeper.code) \(keeper.label)" }, "\(keeper.id): \(reread)")
        }
    }
}
