#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// Random 64-bit words from a 4 KiB buffer that is refilled from the operating system's random
/// source (`getentropy`, 256 bytes a call: sixteen calls per refill, where
/// `SystemRandomNumberGenerator` makes one system call per word).
///
/// The words are as good as the system's (the same kernel source, read in larger pieces); they
/// are meant for identifiers, not for keys or other secrets, which should not sit in a buffer.
/// A forked child discards the buffer it inherited (it would otherwise hand out the parent's
/// words again): a `pthread_atfork` handler counts forks, and a buffer filled before the last
/// fork counts as empty.
///
/// A value type with no lock of its own: whoever shares one keeps it behind a lock
/// (``UUID/makeRandom()``, ``UUIDv7Generator``).
package struct BufferedRandomNumberGenerator: RandomNumberGenerator, Sendable {
    /// Words per refill: 4 KiB.
    package static let capacity = 512
    /// getentropy's limit per call.
    private static let chunkBytes = 256

    private var words: [UInt64]
    /// The next unused word; `capacity` when the buffer is empty.
    private var position: Int
    /// ``forkCount`` when the buffer was filled.
    private var filledAtFork: UInt64 = 0

    package init() {
        words = Array(repeating: 0, count: Self.capacity)
        position = Self.capacity
    }

    package mutating func next() -> UInt64 {
        if position == Self.capacity || filledAtFork != currentForkCount() { refill() }
        let word = words[position]
        position += 1
        return word
    }

    private mutating func refill() {
        filledAtFork = currentForkCount()
        words.withUnsafeMutableBytes { Self.fillFromSystem($0) }
        position = 0
    }

    /// Fills `buffer` from `getentropy`; whatever it cannot fill (a kernel without the call)
    /// comes from `SystemRandomNumberGenerator`, a word at a time.
    static func fillFromSystem(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        var filled = 0
        while filled < buffer.count {
            let n = min(chunkBytes, buffer.count - filled)
            guard getentropy(base + filled, n) == 0 else { break }
            filled += n
        }
        var system = SystemRandomNumberGenerator()
        while filled < buffer.count {
            let word = system.next()
            let n = min(8, buffer.count - filled)
            withUnsafeBytes(of: word) { (base + filled).copyMemory(from: $0.baseAddress!, byteCount: n) }
            filled += n
        }
    }
}

/// How many times this process has forked (counted in the child by a `pthread_atfork` handler).
private let forks = Atomic<UInt64>(0)

/// Installs the handler once, at the first read.
private let forkHandlerInstalled: Bool = pthread_atfork(nil, nil, { forks.add(1, ordering: .relaxed) }) == 0

/// The fork count, with the handler installed. Relaxed: the handler runs in the child before
/// any other code of it, on its only thread.
private func currentForkCount() -> UInt64 {
    _ = forkHandlerInstalled
    return forks.load(ordering: .relaxed)
}
