import CZlib
import Dispatch

/// zlib deflate and inflate with the engine's bounds, on reusable streams.
///
/// `compress2`/`uncompress` set up and tear down a stream per call — for deflate about 260 KiB
/// allocated and freed every block, which made glibc grow and trim the heap on every commit. The
/// streams are instead kept in small pools and reset between uses.
enum Zlib {
    /// Deflates `input` at `level` (1...9). Returns nil when the result would not be smaller than
    /// the input, so the caller stores the bytes raw.
    static func compress(_ input: ArraySlice<UInt8>, level: Int) -> [UInt8]? {
        // Without a stream (zlib could not allocate one) the block is simply stored raw.
        guard let stream = ZStream.takeDeflater(level: level) else { return nil }
        defer { ZStream.returnDeflater(stream, level: level) }
        let bound = Int(compressBound(uLong(input.count)))
        var produced = Int.max
        let output = [UInt8](unsafeUninitializedCapacity: bound) { out, initialized in
            let status = input.withUnsafeBytes { src in
                stream.run(
                    input: src, output: UnsafeMutableRawBufferPointer(out), reset: deflateReset, step: deflate)
            }
            produced = status == Z_STREAM_END ? bound - Int(stream.pointer.pointee.avail_out) : Int.max
            initialized = produced == Int.max ? 0 : produced
        }
        return produced < input.count ? output : nil
    }

    /// ``compress(_:level:)`` of each input, spread over the machine's cores when there is
    /// enough to share (at least ``parallelMinimum`` bytes in more than one input): below that,
    /// handing work to other threads costs more than it saves.
    static func compressEach(_ inputs: [[UInt8]], level: Int) -> [[UInt8]?] {
        guard inputs.count > 1, inputs.reduce(0, { $0 + $1.count }) >= parallelMinimum else {
            return inputs.map { compress($0[...], level: level) }
        }
        let results = Locked([[UInt8]?](repeating: nil, count: inputs.count))
        DispatchQueue.concurrentPerform(iterations: inputs.count) { index in
            let output = compress(inputs[index][...], level: level)
            results.withLock { $0[index] = output }
        }
        return results.withLock { $0 }
    }

    static let parallelMinimum = 96 << 10

    /// Inflates `input` into exactly `rawLength` bytes. Output is never allowed to grow past
    /// `rawLength`; any other outcome returns nil (the caller reports corruption).
    static func decompress(_ input: ArraySlice<UInt8>, rawLength: Int) -> [UInt8]? {
        guard rawLength > 0 else { return nil }
        let stream = ZStream.takeInflater()
        defer { ZStream.returnInflater(stream) }
        var ok = false
        let output = [UInt8](unsafeUninitializedCapacity: rawLength) { out, initialized in
            let status = input.withUnsafeBytes { src in
                stream.run(
                    input: src, output: UnsafeMutableRawBufferPointer(out), reset: inflateReset, step: inflate)
            }
            ok = status == Z_STREAM_END && stream.pointer.pointee.avail_out == 0
            initialized = ok ? rawLength : 0
        }
        return ok ? output : nil
    }
}

/// One zlib stream, deflating or inflating.
///
/// `@unchecked Sendable` because it wraps a C pointer. Lock discipline: a stream is used by one
/// thread at a time — while idle it is owned by its pool (behind the pool's lock), while in use
/// by the one caller that took it out; `run` is only called between take and return.
final class ZStream: @unchecked Sendable {
    let pointer: UnsafeMutablePointer<z_stream>
    private let isDeflater: Bool

    private init?(deflateLevel level: Int?) {
        pointer = .allocate(capacity: 1)
        pointer.initialize(to: z_stream())
        isDeflater = level != nil
        let size = Int32(MemoryLayout<z_stream>.size)
        let status =
            if let level {
                deflateInit_(pointer, Int32(level), zlibVersion(), size)
            } else {
                inflateInit_(pointer, zlibVersion(), size)
            }
        guard status == Z_OK else {
            pointer.deallocate()
            return nil
        }
    }

    deinit {
        if isDeflater { deflateEnd(pointer) } else { inflateEnd(pointer) }
        pointer.deallocate()
    }

    /// Resets the stream, then runs one `Z_FINISH` step from `input` into `output`.
    func run(
        input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer,
        reset: (UnsafeMutablePointer<z_stream>?) -> Int32,
        step: (UnsafeMutablePointer<z_stream>?, Int32) -> Int32
    ) -> Int32 {
        _ = reset(pointer)
        pointer.pointee.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
        pointer.pointee.avail_in = uInt(input.count)
        pointer.pointee.next_out = output.bindMemory(to: Bytef.self).baseAddress
        pointer.pointee.avail_out = uInt(output.count)
        let status = step(pointer, Z_FINISH)
        pointer.pointee.next_in = nil
        pointer.pointee.next_out = nil
        return status
    }

    // MARK: Pools

    private struct Pools {
        var deflaters: [Int: [ZStream]] = [:]
        var inflaters: [ZStream] = []
    }
    /// Idle streams: at most `poolLimit` of each kind (per level for deflate) are kept.
    private static let pools = Locked(Pools())
    private static let poolLimit = 8

    static func takeDeflater(level: Int) -> ZStream? {
        if let stream = pools.withLock({ $0.deflaters[level]?.popLast() }) { return stream }
        return ZStream(deflateLevel: level)
    }

    static func returnDeflater(_ stream: ZStream, level: Int) {
        pools.withLock { pools in
            if pools.deflaters[level, default: []].count < poolLimit { pools.deflaters[level, default: []].append(stream) }
        }
    }

    static func takeInflater() -> ZStream {
        if let stream = pools.withLock({ $0.inflaters.popLast() }) { return stream }
        // inflateInit fails only when it cannot allocate its 7 KiB: as out of memory as Swift's
        // own allocations, which trap too.
        guard let stream = ZStream(deflateLevel: nil) else { fatalError("zlib inflateInit failed: out of memory") }
        return stream
    }

    static func returnInflater(_ stream: ZStream) {
        pools.withLock { pools in
            if pools.inflaters.count < poolLimit { pools.inflaters.append(stream) }
        }
    }
}
