import Foundation

package struct HTTPTestResponse {
    package var status: Int
    package var body: String
    package var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }
}
