/// An error raised while turning a value into record bytes, or while reading bytes that are not a well-formed record.
///
/// Type problems found while decoding a well-formed record (wrong type, missing key, unexpected null, a number that
/// does not fit the requested integer type) are reported as Swift's `DecodingError` instead, because that is what
/// `Decodable` implementations and their callers are written to handle.
package struct RecordError: Error, CustomStringConvertible {
    /// The kind of failure, stable enough to switch on.
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        /// A short identifier such as `truncated`.
        package let rawValue: String
        /// Whether the code describes a failure to encode, as opposed to malformed input bytes.
        package let isEncoding: Bool

        private init(_ rawValue: String, encoding: Bool = false) {
            self.rawValue = rawValue
            self.isEncoding = encoding
        }

        /// The bytes end before the value being read is complete.
        package static let truncated = Code("truncated")
        /// A tag byte that the format does not define.
        package static let unknownTag = Code("unknownTag")
        /// A varint longer than ten bytes, overflowing 64 bits, or padded with redundant zero groups.
        package static let invalidVarint = Code("invalidVarint")
        /// A string, key, URL or decimal payload that is not valid UTF-8.
        package static let invalidUTF8 = Code("invalidUTF8")
        /// The leading format-version byte is not one this code understands.
        package static let unsupportedVersion = Code("unsupportedVersion")
        /// Bytes remain after the top-level value.
        package static let trailingBytes = Code("trailingBytes")
        /// Tags are individually valid but arranged wrongly, e.g. an end byte where a value is required.
        package static let invalidStructure = Code("invalidStructure")
        /// Containers are nested deeper than `RecordFormat.maxDepth`.
        package static let nestingTooDeep = Code("nestingTooDeep")
        /// A value the format cannot represent, e.g. a 128-bit integer outside the 64-bit range.
        package static let unrepresentableValue = Code("unrepresentableValue", encoding: true)
        /// A custom `encode(to:)` threw; the original error is kept in `underlyingError`.
        package static let encodingFailed = Code("encodingFailed", encoding: true)
        /// `Encoder` containers were used inconsistently, e.g. a keyed container requested after an unkeyed one.
        package static let invalidContainerUse = Code("invalidContainerUse", encoding: true)

        /// The identifier, for logs.
        package var description: String { rawValue }
    }

    /// What went wrong.
    package var code: Code
    /// Human-readable detail.
    package var message: String
    /// Where in the value the failure happened, e.g. `address.city` or `tags[2]`; empty for the top level.
    package var codingPath: String
    /// For malformed input, the byte offset at which reading failed.
    package var offset: Int?
    /// For `encodingFailed`, the error thrown by the value's own `encode(to:)`.
    package var underlyingError: (any Error)?

    /// Creates an error; `codingPath` uses the dotted form produced by `RecordError.path(_:)`.
    package init(
        _ code: Code, _ message: String, codingPath: String = "", offset: Int? = nil,
        underlyingError: (any Error)? = nil
    ) {
        self.code = code
        self.message = message
        self.codingPath = codingPath
        self.offset = offset
        self.underlyingError = underlyingError
    }

    /// `cannot encode `a.b`: …` for encoding failures, `malformed record at byte N: …` for bad input.
    package var description: String {
        if code.isEncoding {
            let subject = codingPath.isEmpty ? "value" : "`\(codingPath)`"
            return "cannot encode \(subject): \(message)"
        }
        var text = "malformed record"
        if let offset { text += " at byte \(offset)" }
        text += ": \(message)"
        if !codingPath.isEmpty { text += " (in `\(codingPath)`)" }
        return text
    }

    /// Renders coding keys the way people write paths: `items[2].name`.
    ///
    /// Keys that carry an integer and follow the `Index N` naming used for unkeyed containers print as subscripts;
    /// every other key prints its string value.
    /// A path of more than 24 keys (a value nested hundreds of levels deep) prints its first 16
    /// and its last 4 around the number left out, so that its error stays readable.
    package static func path(_ keys: [any CodingKey]) -> String {
        var text = ""
        func append(_ key: any CodingKey) {
            if let index = key.intValue, key.stringValue == RecordCodingKey.indexName(index) {
                text += "[\(index)]"
            } else {
                if !text.isEmpty { text += "." }
                text += key.stringValue
            }
        }
        guard keys.count > 24 else {
            keys.forEach(append)
            return text
        }
        keys.prefix(16).forEach(append)
        text += "…(\(keys.count - 20) more)…"
        keys.suffix(4).forEach(append)
        return text
    }
}
