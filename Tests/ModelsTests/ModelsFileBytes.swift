import Foundation

/// Every file under `path`, by relative path, with its bytes: two equal results mean nothing
/// under `path` changed.
func fileBytes(under path: String) throws -> [String: Data] {
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
