import Foundation

package struct HTTPTestResponse {
    package var status: Int
    package var body: String
    /// The header lines, names lowercased (a repeated header keeps its last value).
    package var headers: [String: String] = [:]
    package var json: [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:]
    }
}
