import CLMDB
import Foundation

/// One put as Rill did it: database, key, value bytes and flags.
struct CapturedWrite {
    var database: String
    var key: [UInt8]
    var value: [UInt8]
    var flags: UInt32
}
