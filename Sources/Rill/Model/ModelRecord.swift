/// The stored record of one model, while the model reads it: its fields by name.
///
/// A model reads its records through `Decodable` by default. One that implements
/// ``PersistentModel/init(record:)`` reads each field itself instead, as GRDB's
/// `FetchableRecord.init(row:)` reads a row, skipping the generic dispatch that `Decodable`
/// costs for every field of every row a fetch returns:
///
/// ```swift
/// struct Book: PersistentModel {
///     var id: Int
///     var title: String
///     var pages: Int?
/// }
///
/// // In an extension, so that the memberwise initializer stays.
/// extension Book {
///     init(record: borrowing ModelRecord) throws {
///         id = try record.decode(forKey: "id")
///         title = try record.decode(forKey: "title")
///         pages = try record.decodeIfPresent(forKey: "pages")
///     }
/// }
/// ```
///
/// The names are the model's stored field names (its coding keys), and a field reads as it
/// would through `Decodable`, with the same errors: `DecodingError.keyNotFound` for a missing
/// field (through which the model's ``PersistentModel/evolution`` reads older records), and
/// `DecodingError.typeMismatch` or `.valueNotFound` for a value of another kind.
///
/// Read the fields in the order the model encodes them (its coding keys' order): each is then
/// found where the last one ended, without a search of the record. Any order reads the same
/// values. A damaged record fails either way, though when it has several problems, reading in
/// order may report a damaged value before a damaged entry further on.
///
/// A `ModelRecord` reads bytes that are valid only while the model is made, so it can be
/// neither copied nor kept.
public struct ModelRecord: ~Copyable {
    let decoder: RecordDecoder

    init(decoder: RecordDecoder) {
        self.decoder = decoder
    }

    /// The value of the field `key`.
    ///
    /// - Throws: `DecodingError.keyNotFound` when the record has no such field, or the error
    ///   `Decodable` gives for its value.
    public func decode<T: Decodable>(_ type: T.Type = T.self, forKey key: String) throws -> T {
        try decoder.decodeField(T.self, named: key)
    }

    /// The value of the field `key`, or nil when the record lacks it or holds null there.
    public func decodeIfPresent<T: Decodable>(_ type: T.Type = T.self, forKey key: String) throws -> T? {
        try decoder.decodeFieldIfPresent(T.self, named: key)
    }

    /// Whether the record has a field `key` (holding null or not). False also for a record whose
    /// fields do not read; reading one then gives the error.
    public func contains(_ key: String) -> Bool {
        decoder.containsField(named: key)
    }

    /// The whole record decoded as `T` through `Decodable`: how a model that does not implement
    /// ``PersistentModel/init(record:)`` is read.
    public func decode<T: Decodable>(as type: T.Type = T.self) throws -> T {
        try T(from: decoder)
    }
}
