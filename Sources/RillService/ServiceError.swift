import Foundation
import Rill

/// An error as the wire protocol shows it: an HTTP status, a code and a message, sent as
/// `{"error":{"code":"unknownEntity","message":"…"}}` (Documentation/Protocol.md, "Errors").
///
/// The daemon answers every failed request with one, and ends an event stream with one; the
/// client reads the message back from a refused subscription.
package struct ServiceError: Error, Sendable, Equatable {
    /// The HTTP status of the response.
    package var status: Int
    /// A short name of the failure (`unknownEntity`, `badQuery`), for programs.
    package var code: String
    /// What went wrong, for a person.
    package var message: String

    /// An error answered with `status`, `code` and `message`.
    package init(status: Int, code: String, message: String) {
        self.status = status
        self.code = code
        self.message = message
    }

    /// The status, code and message of an error of the library: its code names the status (404 for
    /// an unknown entity, 400 for bad input, 403 for a store that may not be written, 409 for a
    /// destination that already holds something, a compaction a subscription holds back, a save a
    /// unique index refuses, a delete a relationship refuses or a reference to a missing record, 410
    /// for a request before a compacted log's horizon, 503 for a replicated log that does not answer, 507 for
    /// a full disk, else 500), and a query that
    /// does not fit its entity is shown as one that does not parse, with its caret line.
    package init(_ error: RillError) {
        let status: Int
        switch error.code {
        case .unknownEntity: status = 404
        case .invalidRecord, .invalidIdentifier, .encodingFailed, .queryFailed, .misuse, .unknownField, .kindMismatch:
            status = 400
        case .readOnly, .permissionDenied: status = 403
        case .destinationNotEmpty, .historyRetained, .uniqueConflict, .deleteDenied, .danglingReference: status = 409
        case .historyCompacted: status = 410
        case .diskFull: status = 507
        case .replicationUnavailable: status = 503
        default: status = 500
        }
        let message = (error.underlyingError as? QueryParseError)?.description ?? error.message
        self.init(status: status, code: error.code.description, message: message)
    }

    /// `{"error":{"code":…,"message":…}}`.
    package var json: String { Self.json(code: code, message: message) }

    /// The error body of `code` and `message`.
    package static func json(code: String, message: String) -> String {
        #"{"error":{"code":\#(JSONText.string(code)),"message":\#(JSONText.string(message))}}"#
    }

    /// The message of an error body, or nil when `body` is not one.
    package static func message(fromJSON body: String) -> String? {
        guard case .map(let fields)? = try? JSONReader.parse(Array(body.utf8)),
            case .map(let error)? = fields.first(where: { $0.name == "error" })?.value,
            case .string(let text)? = error.first(where: { $0.name == "message" })?.value
        else { return nil }
        return text
    }
}
