import Foundation

/// Stored field paths of key paths, and their text in the names the store keeps.
@usableFromInline
package enum FieldPath {
    /// The stored field path a key path reads (`\Book.address?.city` → `["address", "city"]`);
    /// nil when the key path is not a plain chain of properties.
    @usableFromInline
    package static func components(of keyPath: AnyKeyPath, root: Any.Type) -> [String]? {
        KeyPathNames.names(of: keyPath, root: root)
    }

    // MARK: - Names

    /// The text of a field path in the catalog's names (an index's name, the fields a schema
    /// adds or renames): its components joined by `.`, with a `.`, `,` or `\` that a component
    /// holds (a coding key such as `"a.b"`) escaped by a `\`, so that the text reads back as the
    /// same components (`["a.b", "c"]` → `a\.b.c`). A path without those characters is its
    /// components dot-joined, as before names were escaped.
    package static func text(of path: [String]) -> String {
        path.map(escaped).joined(separator: ".")
    }

    /// The name of an index on `paths`: each path's text, comma-separated (`author,address.city`).
    package static func name(of paths: [[String]]) -> String {
        paths.map(text(of:)).joined(separator: ",")
    }

    /// The field path `text` (made by `text(of:)`) names; `a..b` keeps its empty component.
    package static func path(fromText text: String) -> [String] {
        split(text, atCommas: false).first ?? [""]
    }

    /// The field paths an index name (made by `name(of:)`) names.
    package static func paths(fromName name: String) -> [[String]] {
        split(name, atCommas: true)
    }

    private static func escaped(_ component: String) -> String {
        guard component.contains(where: { $0 == "." || $0 == "," || $0 == "\\" }) else { return component }
        var text = ""
        for character in component {
            if character == "." || character == "," || character == "\\" { text.append("\\") }
            text.append(character)
        }
        return text
    }

    /// The paths of `text`: components end at an unescaped `.`, paths at an unescaped `,` when
    /// `atCommas`; a `\` makes the character after it part of the component (a `\` that ends the
    /// text stays itself).
    private static func split(_ text: String, atCommas: Bool) -> [[String]] {
        var paths: [[String]] = []
        var path: [String] = []
        var component = ""
        var escaping = false
        for character in text {
            if escaping {
                component.append(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else if character == "." {
                path.append(component)
                component = ""
            } else if character == "," && atCommas {
                path.append(component)
                paths.append(path)
                path = []
                component = ""
            } else {
                component.append(character)
            }
        }
        if escaping { component.append("\\") }
        path.append(component)
        paths.append(path)
        return paths
    }
}
