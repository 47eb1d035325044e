/// Builds the raw contents of one table block (FORMAT.md, "Table files", "Block contents"):
/// entries in ascending key order, each key stored as the length it shares with the previous
/// key, the length of the rest, the value's length (three varints), the rest of the key and the
/// value; every `restartInterval` entries a restart point, whose key is stored whole; then the
/// restart points' offsets (`u32` each) and their count (`u32`). As leveldb's `block_builder.cc`.
struct BlockBuilder {
    let restartInterval: Int
    private var buffer: [UInt8] = []
    private var restarts: [UInt32] = []
    private var sinceRestart = 0
    private(set) var lastKey: [UInt8] = []
    private(set) var count = 0

    init(restartInterval: Int) {
        precondition(restartInterval >= 1, "a block restarts at least every entry")
        self.restartInterval = restartInterval
    }

    var isEmpty: Bool { count == 0 }

    /// The size ``finish()`` would return now.
    var estimatedSize: Int { buffer.count + 4 * restarts.count + 4 }

    /// Appends an entry. The caller (``TableBuilder``) has checked that `key` is above every
    /// key added before.
    mutating func add(key: [UInt8], value: [UInt8]) {
        var shared = 0
        if count == 0 || sinceRestart == restartInterval {
            restarts.append(UInt32(buffer.count))
            sinceRestart = 0
        } else {
            shared = commonPrefixLength(lastKey[...], key[...])
        }
        var writer = ByteWriter()
        writer.appendVarint(shared)
        writer.appendVarint(key.count - shared)
        writer.appendVarint(value.count)
        buffer.append(contentsOf: writer.bytes)
        buffer.append(contentsOf: key[shared...])
        buffer.append(contentsOf: value)
        lastKey = key
        sinceRestart += 1
        count += 1
    }

    /// The block's raw contents; the builder starts over empty.
    mutating func finish() -> [UInt8] {
        var writer = ByteWriter(capacity: estimatedSize)
        writer.append(contentsOf: buffer)
        for restart in restarts { writer.append(restart) }
        writer.append(UInt32(restarts.count))
        buffer = []
        restarts = []
        sinceRestart = 0
        lastKey = []
        count = 0
        return writer.bytes
    }
}
