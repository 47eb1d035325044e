/// A value's verified bytes in memory of their own, which live as long as the buffer does
/// (``LogStore/valueBuffer(forKey:)``). The bytes are never written after the buffer is handed
/// out, so a caller may wrap them without copying, in a `Data` whose deallocator holds the
/// buffer, say:
///
/// ```swift
/// let data = Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: buffer.bytes.baseAddress!),
///                 count: buffer.bytes.count, deallocator: .custom { _, _ in _ = buffer })
/// ```
///
/// `@unchecked Sendable`: the memory is written only while the buffer is filled, before any
/// reference to it leaves the engine; afterwards it is read-only until `deinit` frees it, which
/// runs once no reference remains. So any thread may read `bytes` meanwhile.
public final class ValueBuffer: @unchecked Sendable {
    /// The value's bytes. `baseAddress` is never nil, even for an empty value.
    public let bytes: UnsafeRawBufferPointer
    private let storage: UnsafeMutableRawBufferPointer

    /// An uninitialised buffer of `count` bytes, for the engine to fill.
    init(count: Int) {
        storage = .allocate(byteCount: max(count, 1), alignment: 16)
        bytes = UnsafeRawBufferPointer(start: storage.baseAddress, count: count)
    }

    /// A buffer holding a copy of `value`.
    convenience init(copying value: [UInt8]) {
        self.init(count: value.count)
        value.withUnsafeBytes { fill.copyMemory(from: $0) }
    }

    /// The bytes, writable: only while the engine fills the buffer.
    var fill: UnsafeMutableRawBufferPointer { UnsafeMutableRawBufferPointer(rebasing: storage[0..<bytes.count]) }

    deinit { storage.deallocate() }
}
