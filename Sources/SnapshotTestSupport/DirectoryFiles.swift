import Foundation

/// Every file under `path` (by its path below it) and its bytes: what a test compares to show
/// that a refused call left a store's files byte-identical.
public func directoryFiles(_ path: String) throws -> [String: Data] {
    var result: [String: Data] = [:]
    let enumerator = FileManager.default.enumerator(atPath: path)
    while let name = enumerator?.nextObject() as? String {
        var isDirectory: ObjCBool = false
        let full = path + "/" + name
        if FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue {
            result[name] = try Data(contentsOf: URL(fileURLWithPath: full))
        }
    }
    return result
}
