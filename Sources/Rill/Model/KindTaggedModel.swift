import Foundation

/// A model of a family's kind as its record is stored: the discriminator, then the model's own
/// fields, in one map.
///
/// The record encoder continues one map when a value asks for its keyed container twice, so the
/// model's `encode(to:)` (synthesized or not) writes its fields after the discriminator.
struct KindTaggedModel<Model: Encodable>: Encodable {
    let model: Model
    let discriminator: String
    let kind: String

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: RecordCodingKey.self)
        try container.encode(kind, forKey: RecordCodingKey(stringValue: discriminator))
        try model.encode(to: encoder)
    }
}

extension PersistentModel {
    /// The record of `model`, with its kind's name in the discriminator when the model is a
    /// kind of a ``ModelFamily``.
    static func encodeStored(_ model: Self) throws -> [UInt8] {
        guard let family else { return try RecordCoder.encode(model) }
        guard let kind = family.kind(of: Self.self) else {
            throw RillError(
                .invalidConfiguration,
                "\(Self.self) names family \(family.entityName), which does not list it among its kinds")
        }
        return try RecordCoder.encode(
            KindTaggedModel(model: model, discriminator: family.discriminator, kind: kind.name))
    }

    /// The test every record of this model type meets in its entity: for a kind of a family, its
    /// discriminator names the kind; nil for a model of its own.
    static var kindTest: QueryNode? {
        guard let family, let kind = family.kind(of: Self.self) else { return nil }
        return family.test(kind: kind.name)
    }
}
