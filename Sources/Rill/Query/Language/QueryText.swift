/// A query's text as the lexer reads it.
enum QueryText {
    /// The text's UTF-8 bytes when every one is an ASCII character of its own: ASCII without a
    /// carriage return (a CR and the LF after it are one `Character`). Its columns are then its
    /// bytes, and its characters need no walk of grapheme boundaries. Nil otherwise.
    static func plainASCII(_ text: String) -> [UInt8]? {
        let utf8 = text.utf8
        guard utf8.allSatisfy({ $0 < 0x80 && $0 != 0x0D }) else { return nil }
        return Array(utf8)
    }
}
