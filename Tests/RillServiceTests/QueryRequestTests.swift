import Testing

@testable import Rill
@testable import RillService

/// The query of a query or subscription request: from `?q=`, or from a `{"query":…}` body.
@Suite struct QueryRequestTests {
    func refusal(parameter: String?, body: String) -> ServiceError? {
        do {
            _ = try QueryRequest(parameter: parameter, body: Array(body.utf8))
            return nil
        } catch {
            return error
        }
    }

    @Test func theParameterWinsOverTheBody() throws {
        #expect(try QueryRequest(parameter: "Book limit 1", body: []).query.entity == "Book")
        #expect(try QueryRequest(parameter: "Book", body: Array(#"{"query":"Note"}"#.utf8)).query.entity == "Book")
        #expect(try QueryRequest(parameter: nil, body: Array(#"{"query":"Note"}"#.utf8)).query.entity == "Note")
    }

    @Test func aMissingMalformedOrUnparsableQueryIsABadRequest() {
        #expect(
            refusal(parameter: nil, body: "")
                == ServiceError(status: 400, code: "badQuery", message: "give a query as ?q=…"))
        #expect(
            refusal(parameter: nil, body: #"{"q":"Book"}"#)
                == ServiceError(status: 400, code: "badQuery", message: "the body must be {\"query\": \"…\"}"))
        #expect(refusal(parameter: nil, body: "{")?.code == "invalidJSON")
        let unparsable = refusal(parameter: "Book where", body: "")
        #expect(unparsable?.status == 400)
        #expect(unparsable?.code == "badQuery")
        #expect(unparsable?.message.contains("^") == true, "the message shows where: \(unparsable?.message ?? "")")
    }
}
