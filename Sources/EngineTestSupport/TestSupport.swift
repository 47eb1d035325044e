#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Engine
import Foundation

/// A fresh directory under the system's temporary directory, removed (with its files) by
/// ``remove()``.
package struct TemporaryDirectory: Sendable {
    package let path: String

    package init(_ label: String = "walstore") {
        var template = Array("/tmp/\(label)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp failed")
        path = String(cString: template.withUnsafeBufferPointer { $0.baseAddress! })
    }

    /// Removes the directory and everything in it (one level of subdirectories).
    package func remove() {
        func clear(_ directory: String) {
            guard let dir = opendir(directory) else { return }
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
                if name != "." && name != ".." { names.append(name) }
            }
            closedir(dir)
            for name in names {
                let full = directory + "/" + name
                if unlink(full) != 0 { clear(full); rmdir(full) }
            }
        }
        clear(path)
        rmdir(path)
    }
}

/// SplitMix64: a small, fast, seedable generator so a failing random test can be replayed.
package struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    package init(seed: UInt64) { state = seed }
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random bytes (incompressible).
    package mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        result.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < count {
                var word = next()
                let n = min(8, count - offset)
                withUnsafeBytes(of: &word) { raw.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: n) }
                offset += n
            }
        }
        return result
    }
}

/// The UTF-8 bytes of a string, for readable test keys and values.
package func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

extension LogStore {
    /// Every key and value in the store, read through `scan` and `value(forKey:)` both, which
    /// must agree.
    package func contents() throws -> [[UInt8]: [UInt8]] {
        var result: [[UInt8]: [UInt8]] = [:]
        var cursor = try scan(prefix: [])
        while let entry = try cursor.next() {
            let scanned = try entry.value()
            let direct = try value(forKey: entry.key)
            if direct != scanned { throw ScanMismatch(key: entry.key) }
            result[entry.key] = scanned
        }
        return result
    }
}

/// Thrown by ``LogStore/contents()`` when a scan and a point read disagree about a key.
package struct ScanMismatch: Error {
    package let key: [UInt8]
}

/// Runs `body(i)` for `i` in `0..<count`, each on a thread of its own, and returns when all are
/// done. (`DispatchQueue.concurrentPerform` would use one thread per core, two here: too few to
/// make commits pile up.)
package func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let done = DispatchGroup()
    for i in 0..<count {
        done.enter()
        let thread = Thread {
            body(i)
            done.leave()
        }
        thread.start()
    }
    done.wait()
}
