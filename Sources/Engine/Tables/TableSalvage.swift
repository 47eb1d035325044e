/// What can be kept of a table file that may be damaged (FORMAT.md, "Table files"): every entry
/// of every intact data block, the byte ranges that could not be kept and why, and whether the
/// table was whole. A store rewrites a damaged table from ``entries`` and sets the rest aside.
///
/// A data block is intact when its stored bytes pass their crc32 and decode: the type byte, the
/// inflation, the restart array and every entry, each a value, a tombstone or a blob reference.
/// Only such blocks give entries, so no entry is returned that the table did not hold (short of
/// damage the crc32 cannot see).
///
/// The blocks are found in one of two ways:
/// - **By the index**, when the footer and the index block check out (version 5: the top-level
///   index and every index partition): every handle the index names is a data block, intact or
///   not, and every byte of the file is accounted for.
/// - **By walking the file**, when the footer or the index is unreadable (or the file is cut
///   short). In a version-5 table whose top-level index checks out, only the run of data blocks
///   of a damaged index partition is walked (the top-level index says where it starts and
///   ends); the other partitions' blocks are found by their index. A stored block carries no length of its own; its end is where its crc32 matches the
///   bytes from its start. Data blocks lie back to back from offset 0, so each is found from the
///   end of the one before. After damage the walk looks for the next block that ends with a
///   matching crc32 from any start (comparing both ends of every candidate in one pass, by the
///   crc32's linearity). Limit: a block that follows damaged bytes is certain to be found only
///   when it spans at most half of ``resyncWindow`` (256 KiB), and is never found past the whole
///   window; a block that follows an intact one is found at any length.
///   With the footer intact the walk stops where the data blocks end (the filter block, or
///   version 5's first partition); without it, it goes to the end
///   of the file, and what follows the last intact data block is reported as one range.
///
/// Memory: the file's bytes once, the entries, and at most two hash tables of
/// ``resyncWindow`` / 2 candidate starts each while walking past damage. Nothing read from the
/// file is trusted as a length before it is checked against the file's size, and nothing traps.
struct TableSalvage: Sendable {
    /// Why a byte range was not kept.
    enum Reason: Sendable, Equatable {
        /// A data block's crc32 does not match its bytes; when walking, bytes between intact
        /// blocks where no block's crc32 matches.
        case checksumMismatch
        /// A data block passes its crc32 but does not decode (type, inflation, restart array, an
        /// entry, or an entry's value).
        case undecodableBlock
        /// The file ends before its footer: a block is cut, or the footer is missing.
        case cutShort
        /// The footer's checksum, magic or handles do not check out.
        case footerUnreadable
        /// The index block (version 5: the top-level index or an index partition) does not
        /// check out (its crc32, its contents, the handles it names).
        case indexUnreadable
        /// The filter block (version 5: a filter partition) does not check out. No entry is lost: a rewrite builds a new filter
        /// from the keys.
        case filterUnreadable
    }

    /// A byte range of the file that was not kept.
    struct Loss: Sendable, Equatable {
        var range: Range<UInt64>
        var reason: Reason
        /// What was wrong, in words (the decoder's error message).
        var message: String
    }

    /// How the data blocks were found.
    enum Method: Sendable, Equatable {
        case index
        case walk
    }

    /// The most bytes a block found after damage may span when walking (see the type's notes).
    static let resyncWindow = 1 << 19

    /// Every entry of every intact data block, in ascending key order, each key once (should a
    /// key appear twice, the higher sequence is kept).
    let entries: [TableEntry]
    /// Where the intact data blocks lie, in file order.
    let keptBlocks: [BlockHandle]
    /// The ranges not kept, in file order.
    let losses: [Loss]
    let method: Method

    /// True when nothing was lost: the footer, filter, index and every data block check out.
    var isClean: Bool { losses.isEmpty }

    /// Salvages the table `source` holds.
    ///
    /// - Throws: what reading `source` throws, and ``EngineError/Code/unsupportedFormat`` when
    ///   the footer passes its crc32 but names another file kind or table version (such a file
    ///   is not salvaged: this build cannot tell its blocks).
    init(source: any TableSource) throws(EngineError) {
        let size = try source.size()
        guard size <= UInt64(Int.max) else {
            throw .corruption("table of \(size) bytes is larger than memory can hold", path: source.path, offset: 0)
        }
        try self.init(bytes: try source.read(at: 0, count: Int(size)), path: source.path)
    }

    /// Salvages the table whose bytes are `bytes`; `path` names it in messages.
    init(bytes: [UInt8], path: String) throws(EngineError) {
        var scan = Scan(bytes: bytes, path: path)
        method = try scan.run()
        keptBlocks = scan.kept
        losses = scan.losses.enumerated().sorted { a, b in
            (a.element.range.lowerBound, a.offset) < (b.element.range.lowerBound, b.offset)
        }.map(\.element)
        entries = Self.ordered(scan.entries)
    }

    /// `entries` in ascending key order, each key once (the higher sequence wins).
    private static func ordered(_ entries: [TableEntry]) -> [TableEntry] {
        var inOrder = true
        for i in entries.indices.dropFirst() where compareBytes(entries[i - 1].key, entries[i].key) >= 0 {
            inOrder = false
            break
        }
        if inOrder { return entries }
        let sorted = entries.sorted { a, b in
            let order = compareBytes(a.key, b.key)
            return order != 0 ? order < 0 : a.sequence > b.sequence
        }
        var result: [TableEntry] = []
        for entry in sorted where result.last?.key != entry.key { result.append(entry) }
        return result
    }
}

extension TableSalvage {
    /// One salvage: the stages are the footer, the index (or a walk of the data), the filter.
    private struct Scan {
        let bytes: [UInt8]
        let path: String
        var kept: [BlockHandle] = []
        var losses: [Loss] = []
        var entries: [TableEntry] = []

        init(bytes: [UInt8], path: String) {
            self.bytes = bytes
            self.path = path
        }

        mutating func run() throws(EngineError) -> Method {
            let footer: TableFooter
            do {
                footer = try TableFooter.decode(bytes.suffix(TableFormat.footerSize), fileSize: UInt64(bytes.count), path: path)
            } catch {
                if error.code == .unsupportedFormat { throw error }
                walkWithoutFooter(error)
                return .walk
            }
            if footer.isPartitioned { return try runPartitioned(footer) }
            let handles: [BlockHandle]
            do {
                handles = try index(footer)
            } catch {
                walkWithoutIndex(footer)
                checkFilter(footer)
                losses.append(Loss(range: range(footer.index), reason: .indexUnreadable, message: error.message))
                return .walk
            }
            if let index = try? indexBlock(footer) {
                checkSeparators(index, handles, previous: nil, lossRange: range(footer.index))
            } else {
                for handle in handles { keep(handle) }
            }
            checkFilter(footer)
            return .index
        }

        /// A version-5 table: the top-level index names the partitions; each index partition
        /// names its data blocks, or (when it does not check out) its run of data blocks is
        /// walked; each filter partition is checked.
        private mutating func runPartitioned(_ footer: TableFooter) throws(EngineError) -> Method {
            let top: Block
            let partitions: [TableReader.Partition]
            do throws(EngineError) {
                let start = Int(footer.index.offset)
                let raw = try StoredBlock.decode(bytes[start..<start + Int(footer.index.length)], path: path, offset: footer.index.offset)
                guard checksum(raw[...]) == footer.indexChecksum else {
                    throw .corruption("table top-level index does not match the footer's crc32", path: path, offset: footer.index.offset)
                }
                top = try Block(raw: raw, path: path, offset: footer.index.offset)
                partitions = try TableReader.decodeTopIndex(top, footer: footer)
            } catch {
                walkWithoutIndex(footer)
                losses.append(Loss(range: range(footer.index), reason: .indexUnreadable, message: error.message))
                return .walk
            }
            var method = Method.index
            for (number, partition) in partitions.enumerated() {
                do throws(EngineError) {
                    let start = Int(partition.index.offset)
                    let raw = try StoredBlock.decode(
                        bytes[start..<start + Int(partition.index.length)], path: path, offset: partition.index.offset)
                    let block = try Block(raw: raw, path: path, offset: partition.index.offset)
                    let handles = try TableReader.decodeIndex(
                        block, dataStart: partition.dataStart, dataEnd: partition.dataEnd, lastSeparator: try top.restartKey(number))
                    let previous = number > 0 ? Array(try top.restartKey(number - 1)) : nil
                    checkSeparators(block, handles, previous: previous, lossRange: range(partition.index))
                } catch {
                    method = .walk
                    let end = walk(Int(partition.dataStart)..<Int(partition.dataEnd))
                    if end < Int(partition.dataEnd) {
                        losses.append(
                            Loss(
                                range: UInt64(end)..<partition.dataEnd, reason: .checksumMismatch,
                                message: "no intact data block ends in these bytes"))
                    }
                    losses.append(Loss(range: range(partition.index), reason: .indexUnreadable, message: error.message))
                }
                do throws(EngineError) {
                    let start = Int(partition.filter.offset)
                    _ = try BloomFilter(
                        raw: StoredBlock.decode(bytes[start..<start + Int(partition.filter.length)], path: path, offset: partition.filter.offset),
                        path: path, offset: partition.filter.offset)
                } catch {
                    losses.append(Loss(range: range(partition.filter), reason: .filterUnreadable, message: error.message))
                }
            }
            return method
        }

        /// Keeps the data block at `handle` (inside the file) when it is intact, else records
        /// its loss. Returns the intact block's entries.
        @discardableResult
        private mutating func keep(_ handle: BlockHandle) -> [TableEntry] {
            let start = Int(handle.offset)
            switch dataBlock(bytes[start..<start + Int(handle.length)], offset: handle.offset) {
            case .intact(let blockEntries):
                kept.append(handle)
                entries += blockEntries
                return blockEntries
            case .lost(let loss):
                losses.append(loss)
                return []
            }
        }

        /// Keeps the data blocks `handles` that `index` names, and checks each intact one against
        /// the separators (FORMAT.md, "Checks behind the checksums"): its last key at or below its
        /// own, its first key above the one before (`previous` before the first). A separator
        /// that disagrees, checksums notwithstanding, makes the index a loss (no entry is lost: the
        /// rewrite builds a new index from the keys).
        private mutating func checkSeparators(_ index: Block, _ handles: [BlockHandle], previous: [UInt8]?, lossRange: Range<UInt64>) {
            var before = previous
            var disagrees = false
            for (number, handle) in handles.enumerated() {
                let blockEntries = keep(handle)
                guard let separator = try? Array(index.restartKey(number)) else { continue }
                if let first = blockEntries.first, let last = blockEntries.last {
                    if compareBytes(last.key, separator) > 0 { disagrees = true }
                    if let before, compareBytes(first.key, before) <= 0 { disagrees = true }
                }
                before = separator
            }
            if disagrees {
                losses.append(
                    Loss(
                        range: lossRange, reason: .indexUnreadable,
                        message: "a table index separator is below its data block's last key or not above the block before"))
            }
        }

        /// The footer is unreadable (`error`): the data blocks are walked to the end of the file,
        /// and what follows the last intact one is lost, as cut short when the file does not end
        /// in something that starts as a footer.
        private mutating func walkWithoutFooter(_ error: EngineError) {
            let end = walk(0..<bytes.count)
            let hasFooter =
                bytes.count >= TableFormat.footerSize
                && bytes.suffix(TableFormat.footerSize).prefix(TableFormat.magic.count).elementsEqual(TableFormat.magic)
            let range = UInt64(end)..<UInt64(bytes.count)
            if hasFooter {
                losses.append(
                    Loss(range: range, reason: .footerUnreadable, message: "\(error.message); nothing after the last intact data block was kept"))
            } else {
                losses.append(
                    Loss(
                        range: range, reason: .cutShort,
                        message: "the file ends without a table footer (cut short); nothing after the last intact data block was kept"))
            }
        }

        /// The footer checks out but the index does not: the data blocks are walked up to the
        /// filter block.
        private mutating func walkWithoutIndex(_ footer: TableFooter) {
            let dataEnd = Int(footer.filter.offset)
            let end = walk(0..<dataEnd)
            if end < dataEnd {
                losses.append(
                    Loss(
                        range: UInt64(end)..<footer.filter.offset, reason: .checksumMismatch,
                        message: "no intact data block ends in these bytes"))
            }
        }

        private func range(_ handle: BlockHandle) -> Range<UInt64> { handle.offset..<handle.offset + handle.length }

        /// The data block handles the index names (the footer has checked that the index block
        /// lies inside the file).
        /// The version-4 index block, decoded (after ``index(_:)`` checked it).
        private func indexBlock(_ footer: TableFooter) throws(EngineError) -> Block {
            let start = Int(footer.index.offset)
            return try Block(
                raw: StoredBlock.decode(bytes[start..<start + Int(footer.index.length)], path: path, offset: footer.index.offset),
                path: path, offset: footer.index.offset)
        }

        private func index(_ footer: TableFooter) throws(EngineError) -> [BlockHandle] {
            let start = Int(footer.index.offset)
            let raw = try StoredBlock.decode(bytes[start..<start + Int(footer.index.length)], path: path, offset: footer.index.offset)
            guard checksum(raw[...]) == footer.indexChecksum else {
                throw .corruption("table index block does not match the footer's crc32", path: path, offset: footer.index.offset)
            }
            return try TableReader.decodeIndex(Block(raw: raw, path: path, offset: footer.index.offset), dataEnd: footer.filter.offset)
        }

        private mutating func checkFilter(_ footer: TableFooter) {
            let start = Int(footer.filter.offset)
            do throws(EngineError) {
                let raw = try StoredBlock.decode(bytes[start..<start + Int(footer.filter.length)], path: path, offset: footer.filter.offset)
                guard checksum(raw[...]) == footer.filterChecksum else {
                    throw .corruption("table filter block does not match the footer's crc32", path: path, offset: footer.filter.offset)
                }
                _ = try BloomFilter(raw: raw, path: path, offset: footer.filter.offset, coversKeys: footer.filter.offset > 0)
            } catch {
                losses.append(Loss(range: range(footer.filter), reason: .filterUnreadable, message: error.message))
            }
        }

        private enum BlockOutcome {
            case intact([TableEntry])
            case lost(Loss)
        }

        /// The entries of the stored data block `stored` at `offset`, or why it cannot be kept.
        private func dataBlock(_ stored: ArraySlice<UInt8>, offset: UInt64) -> BlockOutcome {
            let range = offset..<offset + UInt64(stored.count)
            guard stored.count >= TableFormat.trailerSize,
                checksum(stored.dropLast(4)) == loadUInt32(stored, at: stored.endIndex - 4)
            else { return .lost(Loss(range: range, reason: .checksumMismatch, message: "table data block fails its crc32")) }
            do throws(EngineError) {
                let block = try Block(raw: StoredBlock.decode(stored, path: path, offset: offset), path: path, offset: offset)
                var result: [TableEntry] = []
                for (key, value) in try block.entries() {
                    result.append(try TableEntryView(block: block, value: value).entry(key: key))
                }
                return .intact(result)
            } catch {
                return .lost(Loss(range: range, reason: .undecodableBlock, message: error.message))
            }
        }

        // MARK: Walking

        /// Finds the intact data blocks in `region` (which starts at a block) without the
        /// index, keeping them and recording the damaged bytes between them. Returns where the
        /// last intact block ends (the region's start when there is none): what follows is the
        /// caller's to report.
        private mutating func walk(_ region: Range<Int>) -> Int {
            var start = region.lowerBound
            while start < region.upperBound {
                guard let (blockStart, blockEnd, blockEntries) = nextBlock(from: start, end: region.upperBound) else { break }
                if blockStart > start {
                    losses.append(
                        Loss(
                            range: UInt64(start)..<UInt64(blockStart), reason: .checksumMismatch,
                            message: "no intact data block ends in these bytes"))
                }
                kept.append(BlockHandle(offset: UInt64(blockStart), length: UInt64(blockEnd - blockStart)))
                entries += blockEntries
                start = blockEnd
            }
            return start
        }

        /// The first intact, non-empty data block in `start..<end` (by where it ends): one that
        /// starts at `start`, of any length, or one that starts later and spans at most
        /// ``TableSalvage/resyncWindow`` bytes.
        ///
        /// A block `s..<e + 4` is a candidate when the crc32 of `s..<e` equals the `u32` at `e`.
        /// With `P(i)` the crc32 of `start..<i` and `X` the polynomial `x^8`, crc32 is linear:
        /// `crc(s..<e) = P(e) ⊕ P(s)·X^(e−s)`. So the candidate condition is
        /// `P(s)·X^(−s) = (P(e) ⊕ crc)·X^(−e)`: a value per possible start and a value per
        /// possible end, matched through a hash table in one pass.
        private func nextBlock(from start: Int, end: Int) -> (Int, Int, [TableEntry])? {
            let half = TableSalvage.resyncWindow / 2
            var recent: [UInt32: Int] = [:]  // start value → start, for the newest starts
            var older: [UInt32: Int] = [:]  // the generation before
            var register: UInt32 = 0xFFFF_FFFF  // crc32's register over start..<i, before its final inversion
            var inverse: UInt32 = CRC32Algebra.one  // X^(−(i − start))
            let startValue: UInt32 = 0  // the value of `start` itself: P(start) = 0
            let lastCrc = end - 4
            var i = start
            while i <= lastCrc {
                // i as the place of a crc32 (the block's contents and type byte end at i).
                if i > start, bytes[i - 1] <= TableFormat.blockTypeZlib {
                    let stored = loadUInt32(bytes[...], at: i)
                    let endValue = CRC32Algebra.multiply(~register ^ stored, inverse)
                    let candidate = endValue == startValue ? start : recent[endValue] ?? older[endValue]
                    if let s = candidate, s < i, s == start || i + 4 - s <= TableSalvage.resyncWindow,
                        case .intact(let found) = dataBlock(bytes[s..<i + 4], offset: UInt64(s)), !found.isEmpty
                    {
                        return (s, i + 4, found)
                    }
                }
                // i as the start of a block.
                if i > start {
                    if recent.count == half {
                        older = recent
                        recent.removeAll(keepingCapacity: true)
                    }
                    recent[CRC32Algebra.multiply(~register, inverse)] = i
                }
                register = CRC32Algebra.update(register, bytes[i])
                inverse = CRC32Algebra.divideByX8(inverse)
                i += 1
            }
            return nil
        }
    }
}

/// crc32's arithmetic (polynomial 0xEDB88320, zlib's reflected form: bit 31 is the coefficient of
/// x^0), for finding blocks by their checksums.
enum CRC32Algebra {
    static let polynomial: UInt32 = 0xEDB8_8320
    /// The polynomial 1.
    static let one: UInt32 = 0x8000_0000

    /// `a·b` modulo the polynomial (as zlib's `multmodp`).
    static func multiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var a = a
        var b = b
        var product: UInt32 = 0
        while a != 0 {
            if a & one != 0 { product ^= b }
            a <<= 1
            b = b & 1 != 0 ? (b >> 1) ^ polynomial : b >> 1
        }
        return product
    }

    /// `a·x^(−8)`: the inverse of eight steps of multiplying by x.
    static func divideByX8(_ a: UInt32) -> UInt32 {
        var a = a
        for _ in 0..<8 { a = a & one != 0 ? ((a ^ polynomial) << 1) | 1 : a << 1 }
        return a
    }

    /// The register after one more byte (before the final inversion; zlib's table step).
    static func update(_ register: UInt32, _ byte: UInt8) -> UInt32 {
        table[Int((register ^ UInt32(byte)) & 0xFF)] ^ (register >> 8)
    }

    static let table: [UInt32] = (0..<256).map { (n: UInt32) in
        var c = n
        for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ polynomial : c >> 1 }
        return c
    }
}
