import Rill

extension RecordValue {
    /// A request's body read as JSON.
    ///
    /// - Throws: ``ServiceError`` 400 `invalidJSON`, with the position and what was expected.
    package static func parsing(body: [UInt8]) throws(ServiceError) -> RecordValue {
        do {
            return try JSONReader.parse(body)
        } catch {
            throw ServiceError(status: 400, code: "invalidJSON", message: error.description)
        }
    }
}
