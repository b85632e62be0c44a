import Testing

@testable import Rill
@testable import RillService

/// Errors as the wire shows them: HTTP statuses, codes, the JSON body, and its message read back.
@Suite struct ServiceErrorTests {
    @Test func theCodeOfALibraryErrorNamesItsStatus() {
        let statuses: [(RillError.Code, Int)] = [
            (.unknownEntity, 404), (.invalidRecord, 400), (.invalidIdentifier, 400), (.encodingFailed, 400),
            (.queryFailed, 400), (.misuse, 400), (.unknownField, 400), (.kindMismatch, 400), (.readOnly, 403),
            (.permissionDenied, 403), (.destinationNotEmpty, 409), (.uniqueConflict, 409), (.diskFull, 507),
            (.storage, 500),
            (.corruptStore, 500),
        ]
        for (code, status) in statuses {
            let error = ServiceError(RillError(code, "it failed"))
            #expect(error.status == status, "\(code)")
            #expect(error.code == code.description)
            #expect(error.message == "it failed")
        }
    }

    @Test func aQueryThatDoesNotFitShowsItsCaretLine() throws {
        var parseError: QueryParseError?
        do {
            _ = try QueryParser.parse("Book where")
        } catch {
            parseError = error
        }
        let underlying = try #require(parseError)
        let error = ServiceError(RillError(.unknownField, "short", underlyingError: underlying))
        #expect(error.message == underlying.description)
    }

    @Test func theBodyIsEscapedJSONAndReadsBack() {
        let error = ServiceError(status: 400, code: "badQuery", message: "a \"quote\", a \\, a\nline and \u{1}")
        #expect(error.json == #"{"error":{"code":"badQuery","message":"a \"quote\", a \\, a\nline and \u0001"}}"#)
        #expect(ServiceError.message(fromJSON: error.json) == error.message)
        #expect(ServiceError.message(fromJSON: "not json") == nil)
        #expect(ServiceError.message(fromJSON: #"{"error":"flat"}"#) == nil)
    }
}
