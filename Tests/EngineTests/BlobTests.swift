@testable import Engine
import EngineTestSupport
import Foundation
import Testing

/// Blob files (values over ``Options/blobThreshold``, and ``WriteBatch/putExternal(_:_:)``
/// values): the threshold, empty and very large blobs, raw and compressed encodings, every read
/// path, damage to the files, power loss during a commit that writes blobs, collection by
/// compaction and by open, and a failed external source.
@Suite struct BlobTests {
    static let dir = "/blobstore"
    static let blobDir = dir + "/blobs"
    static let chunkSize = 1 << 20
    static let headerSize = 44
    /// Stored length (4) and XXH64 (8) per chunk.
    static let entrySize = 12

    static func options(threshold: Int = 1000) -> LogStore.Options {
        var options = LogStore.Options()
        options.blobThreshold = threshold
        return options
    }

    // MARK: Helpers

    /// Reads `key` through `value(forKey:)`, `valueStream(forKey:)`, `withValue(forKey:_:)` and
    /// `scan`, expects all four to agree (and the stream's chunks to be 1 MiB at most, its
    /// `length` right), and returns the value.
    static func readEveryWay(
        _ store: LogStore, _ key: [UInt8], sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [UInt8]? {
        let value = try store.value(forKey: key)
        let mapped = try store.withValue(forKey: key) { Array($0) }
        #expect(mapped == value, "withValue disagrees with value(forKey:)", sourceLocation: sourceLocation)
        let buffered = try store.valueBuffer(forKey: key).map { Array($0.bytes) }
        #expect(buffered == value, "valueBuffer disagrees with value(forKey:)", sourceLocation: sourceLocation)
        let scanned = try store.scan(prefix: key).collect().first { $0.key == key }
        #expect(try scanned?.value() == value, "scan disagrees with value(forKey:)", sourceLocation: sourceLocation)
        guard var stream = try store.valueStream(forKey: key) else {
            #expect(value == nil, "no stream for a present key", sourceLocation: sourceLocation)
            return value
        }
        var streamed: [UInt8] = []
        while let chunk = try stream.next() {
            #expect(!chunk.isEmpty && chunk.count <= chunkSize, "chunk of \(chunk.count) bytes", sourceLocation: sourceLocation)
            streamed += chunk
        }
        #expect(stream.length == UInt64(streamed.count), "stream length", sourceLocation: sourceLocation)
        #expect(streamed == value, "valueStream disagrees with value(forKey:)", sourceLocation: sourceLocation)
        return value
    }

    /// The finished blob files in the store's blob directory, sorted.
    static func blobFiles(_ fs: FaultInjectingFileSystem) -> [String] {
        fs.names(in: blobDir).filter { $0.hasSuffix(".blob") }.sorted()
    }

    /// The error `body` throws, as an ``EngineError`` (recording an issue for any other error).
    static func engineError(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) -> EngineError? {
        do {
            try body()
            return nil
        } catch let error as EngineError {
            return error
        } catch {
            Issue.record("not an EngineError: \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    /// True when `a` and `b` hold the same bytes (memcmp: fast in a debug build).
    static func same(_ a: [UInt8], _ b: ArraySlice<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        guard !a.isEmpty else { return true }
        return a.withUnsafeBytes { x in b.withUnsafeBytes { y in memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0 } }
    }

    /// Creates `path` in the fault-injecting file system holding `bytes` (durably).
    static func makeFile(_ fs: FaultInjectingFileSystem, _ path: String, _ bytes: [UInt8]) throws {
        _ = try fs.openFile(path, create: true)
        fs.setContents(bytes, of: path)
    }

    /// Text that compresses well: JSON-ish records.
    static func jsonText(_ count: Int) -> [UInt8] {
        var text: [UInt8] = []
        text.reserveCapacity(count + 200)
        var i = 0
        while text.count < count {
            text += Array(#"{"id": \#(i), "name": "asset-\#(i % 97)", "tags": ["texture", "lod\#(i % 4)"], "size": \#(i * 37 % 4096)}"#.utf8)
            text.append(10)
            i += 1
        }
        return Array(text.prefix(count))
    }

    /// A store's home: the in-memory fault-injecting file system, or a temporary directory on disk
    /// (where `withValue` really maps the blob file).
    enum Medium: String, CaseIterable, Sendable { case memory, disk }

    struct Home {
        let fs: FaultInjectingFileSystem?
        let temporary: TemporaryDirectory?
        let path: String

        init(_ medium: Medium) {
            switch medium {
            case .memory:
                fs = FaultInjectingFileSystem()
                temporary = nil
                path = BlobTests.dir
            case .disk:
                fs = nil
                let temporary = TemporaryDirectory("walstore-blobs")
                self.temporary = temporary
                path = temporary.path + "/store"
            }
        }

        func open(_ options: LogStore.Options) throws -> LogStore {
            if let fs { return try LogStore.open(at: path, options: options, fileSystem: fs) }
            return try LogStore.open(at: path, options: options)
        }

        /// The finished blob files, sorted.
        func blobFiles() -> [String] {
            let names =
                fs.map { $0.names(in: path + "/blobs") }
                ?? (try? FileManager.default.contentsOfDirectory(atPath: path + "/blobs")) ?? []
            return names.filter { $0.hasSuffix(".blob") }.sorted()
        }

        /// Every name in the blob directory (temporary files too).
        func blobDirectoryNames() -> [String] {
            fs.map { $0.names(in: path + "/blobs") }
                ?? (try? FileManager.default.contentsOfDirectory(atPath: path + "/blobs")) ?? []
        }

        /// A path outside the store, for an external source.
        func outside(_ name: String) -> String {
            (temporary?.path ?? "/outside") + "/" + name
        }

        func bytes(ofBlob name: String) -> [UInt8] {
            let full = path + "/blobs/" + name
            if let fs { return fs.contents(of: full) ?? [] }
            return FileManager.default.contents(atPath: full).map { [UInt8]($0) } ?? []
        }

        func remove() { temporary?.remove() }
    }

    // MARK: 1. Threshold

    @Test func valuesUpToTheThresholdStayInlineAndLongerOnesBecomeBlobs() throws {
        let fs = FaultInjectingFileSystem()
        var random = SeededGenerator(seed: 1)
        let cases: [(key: [UInt8], value: [UInt8], blob: Bool)] = [
            (bytes("v999"), random.bytes(999), false),
            (bytes("v1000"), random.bytes(1000), false),
            (bytes("v1001"), random.bytes(1001), true),
        ]
        var store = try LogStore.open(at: Self.dir, options: Self.options(threshold: 1000), fileSystem: fs)
        var expectedBlobs = 0
        for (key, value, blob) in cases {
            try store.write { $0.put(key, value) }
            if blob { expectedBlobs += 1 }
            #expect(Self.blobFiles(fs).count == expectedBlobs, "after \(value.count) bytes")
            #expect(store.statistics.blobCount == expectedBlobs, "after \(value.count) bytes")
        }
        let file = try #require(Self.blobFiles(fs).first)
        #expect(store.statistics.blobBytes == UInt64(fs.contents(of: Self.blobDir + "/" + file)!.count))

        for pass in ["open", "reopened"] {
            for (key, value, blob) in cases {
                #expect(try Self.readEveryWay(store, key) == value, "\(value.count) bytes, \(pass)")
                let entry = try #require(try store.scan(prefix: key).collect().first { $0.key == key })
                #expect(entry.isBlob == blob, "\(value.count) bytes, \(pass)")
            }
            #expect(try store.contents() == Dictionary(uniqueKeysWithValues: cases.map { ($0.key, $0.value) }))
            try store.close()
            store = try LogStore.open(at: Self.dir, options: Self.options(threshold: 1000), fileSystem: fs)
            #expect(store.statistics.blobCount == 1)
            #expect(store.statistics.recovery.removedBlobs == 0)
            #expect(Self.blobFiles(fs) == [file])
        }
        try store.close()
    }

    // MARK: 2. Empty blob

    @Test(arguments: Medium.allCases)
    func emptyExternalValueRoundTrips(medium: Medium) throws {
        let home = Home(medium)
        defer { home.remove() }
        var store = try home.open(Self.options())
        try store.write { $0.putExternal(bytes("empty"), []) }
        let files = home.blobFiles()
        #expect(files.count == 1)
        #expect(store.statistics.blobCount == 1)
        for pass in ["open", "reopened"] {
            var stream = try #require(try store.valueStream(forKey: bytes("empty")), "\(pass)")
            #expect(stream.length == 0, "\(pass)")
            #expect(try stream.next() == nil, "\(pass)")
            #expect(try stream.next() == nil, "\(pass): a finished stream stays finished")
            #expect(try store.value(forKey: bytes("empty")) == [], "\(pass)")
            #expect(try store.withValue(forKey: bytes("empty")) { $0.count } == 0, "\(pass)")
            #expect(try Self.readEveryWay(store, bytes("empty")) == [], "\(pass)")
            #expect((try store.scan(prefix: bytes("empty")).collect()).first?.isBlob == true, "\(pass)")
            try store.close()
            store = try home.open(Self.options())
        }
        #expect(home.blobFiles() == files)
        // Header and table checksum only.
        #expect(home.bytes(ofBlob: files[0]).count == Self.headerSize + 4)
        try store.close()
    }

    // MARK: 3. 100 MiB

    @Test func hundredMebibyteFileIsCopiedAndStreamedInChunksNeverWhole() throws {
        let fs = FaultInjectingFileSystem()
        let chunks = 100
        // 100 distinct 1 MiB windows of a 2 MiB random pool: cheap to build, never constant, and
        // a chunk returned out of order or twice does not match.
        var random = SeededGenerator(seed: 3)
        let pool = random.bytes(2 * Self.chunkSize)
        var source: [UInt8] = []
        source.reserveCapacity(chunks * Self.chunkSize)
        for i in 0..<chunks {
            let start = (i &* 7919 &+ i &* i) % Self.chunkSize
            source += pool[start..<start + Self.chunkSize]
        }
        let sourcePath = "/outside/asset.bin"
        try Self.makeFile(fs, sourcePath, source)

        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        try store.write { $0.putExternal(bytes("asset"), contentsOfFile: sourcePath) }
        let file = try #require(Self.blobFiles(fs).first)
        let fileSize = fs.contents(of: Self.blobDir + "/" + file)!.count
        // Random content is stored raw: header, the bytes, one table entry per chunk, checksum.
        #expect(fileSize == Self.headerSize + source.count + chunks * Self.entrySize + 4)
        #expect(store.statistics.blobBytes == UInt64(fileSize))

        var stream = try #require(try store.valueStream(forKey: bytes("asset")))
        #expect(stream.length == UInt64(source.count))
        var offset = 0
        var count = 0
        while let chunk = try stream.next() {
            #expect(chunk.count <= Self.chunkSize && !chunk.isEmpty, "chunk \(count) is \(chunk.count) bytes")
            let end = offset + chunk.count
            let matches = end <= source.count && Self.same(chunk, source[offset..<end])
            #expect(matches, "chunk \(count) at \(offset) differs")
            if !matches { break }
            offset = end
            count += 1
        }
        #expect(offset == source.count)
        #expect(count == chunks)
        // Neither the copy in nor the stream out asked for more than a chunk (plus the table).
        #expect(fs.largestRead <= Self.chunkSize + 4096, "largest read \(fs.largestRead)")
        try store.close()
    }

    // MARK: 4. Encodings

    @Test(arguments: Medium.allCases)
    func incompressibleBlobIsStoredRawAndCompressibleOneCompressed(medium: Medium) throws {
        let home = Home(medium)
        defer { home.remove() }
        var random = SeededGenerator(seed: 4)
        let noise = random.bytes(2 * Self.chunkSize + 12345)
        let text = Self.jsonText(2 * Self.chunkSize + 777)
        // Compressible at the start (so zlib is chosen), random in the middle (a chunk that does
        // not shrink is kept as it is).
        let mixed = Self.jsonText(Self.chunkSize) + random.bytes(Self.chunkSize) + Self.jsonText(3000)
        var store = try home.open(LogStore.Options())

        try store.write { $0.put(bytes("noise"), noise) }
        let noiseFile = try #require(home.blobFiles().first)
        try store.write { $0.put(bytes("text"), text) }
        let textFile = try #require(home.blobFiles().first { $0 != noiseFile })

        let rawBytes = home.bytes(ofBlob: noiseFile)
        #expect(rawBytes.count == Self.headerSize + noise.count + 3 * Self.entrySize + 4)
        #expect(Array(rawBytes.prefix(8)) == bytes("WALSBLOB"))
        #expect(rawBytes[10] == 0, "raw encoding")
        #expect(Self.same(noise, rawBytes[Self.headerSize..<Self.headerSize + noise.count]), "raw chunks hold the bytes as they are")

        let zlibBytes = home.bytes(ofBlob: textFile)
        #expect(zlibBytes.count < text.count / 4, "compressed to \(zlibBytes.count) of \(text.count)")
        #expect(zlibBytes[10] == 1, "zlib encoding")

        try store.write { $0.put(bytes("mixed"), mixed) }
        let mixedFile = try #require(home.blobFiles().first { $0 != noiseFile && $0 != textFile })
        let mixedBytes = home.bytes(ofBlob: mixedFile)
        #expect(mixedBytes[10] == 1, "zlib encoding")
        #expect(mixedBytes.count > Self.chunkSize && mixedBytes.count < Self.chunkSize + (256 << 10), "\(mixedBytes.count) bytes")

        for pass in ["open", "reopened"] {
            #expect(try Self.readEveryWay(store, bytes("noise")) == noise, "\(pass)")
            #expect(try Self.readEveryWay(store, bytes("text")) == text, "\(pass)")
            #expect(try Self.readEveryWay(store, bytes("mixed")) == mixed, "\(pass)")
            let mappedNoise = try store.withValue(forKey: bytes("noise")) { Array($0) }
            let mappedText = try store.withValue(forKey: bytes("text")) { Array($0) }
            #expect(mappedNoise == noise, "\(pass)")
            #expect(mappedText == text, "\(pass)")
            try store.close()
            store = try home.open(LogStore.Options())
        }
        try store.close()
    }

    // MARK: 5. Missing and damaged blobs

    /// A store holding `key` as a blob of three chunks (the last one short), raw or compressed;
    /// returns the file system (store closed), the value and the blob file's path.
    static func storeWithOneBlob(compressed: Bool) throws -> (FaultInjectingFileSystem, [UInt8], String) {
        let fs = FaultInjectingFileSystem()
        var random = SeededGenerator(seed: 5)
        let value = compressed ? jsonText(2 * chunkSize + 5000) : random.bytes(2 * chunkSize + 5000)
        let store = try LogStore.open(at: dir, options: LogStore.Options(), fileSystem: fs)
        try store.write { $0.put(bytes("key"), value) }
        try store.close()
        let file = try #require(blobFiles(fs).first)
        return (fs, value, blobDir + "/" + file)
    }

    /// Where each chunk's stored bytes lie in the blob file `bytes` of a value of `length`.
    static func chunkRanges(_ bytes: [UInt8], length: Int) -> [Range<Int>] {
        let count = (length + chunkSize - 1) / chunkSize
        let table = bytes.count - (count * entrySize + 4)
        var ranges: [Range<Int>] = []
        var offset = headerSize
        for i in 0..<count {
            let entry = table + i * entrySize
            let stored = (0..<4).reduce(0) { $0 | Int(bytes[entry + $1]) << (8 * $1) }
            ranges.append(offset..<offset + stored)
            offset += stored
        }
        return ranges
    }

    /// Every read of `key` fails with `code` naming `path` (and `offset`, when given), and none
    /// returns a byte.
    static func expectEveryReadFails(
        _ store: LogStore, key: [UInt8] = bytes("key"), code: EngineError.Code, path: String, offset: UInt64? = nil,
        _ label: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let errors: [(String, EngineError?)] = [
            ("value", engineError { _ = try store.value(forKey: key) }),
            ("valueBuffer", engineError { _ = try store.valueBuffer(forKey: key) }),
            ("withValue", engineError { _ = try store.withValue(forKey: key) { _ in Issue.record("\(label): withValue ran its body") } }),
            (
                "valueStream",
                engineError {
                    guard var stream = try store.valueStream(forKey: key) else { return }
                    while try stream.next() != nil {}
                }
            ),
            ("scan", engineError { _ = try (store.scan(prefix: key).collect()).first?.value() }),
        ]
        for (read, error) in errors {
            #expect(error?.code == code, "\(label): \(read) threw \(String(describing: error))", sourceLocation: sourceLocation)
            #expect(error?.path == path, "\(label): \(read) names \(String(describing: error?.path))", sourceLocation: sourceLocation)
            if let offset {
                #expect(
                    error?.offset == offset, "\(label): \(read) names offset \(String(describing: error?.offset))", sourceLocation: sourceLocation)
            }
        }
    }

    @Test func missingBlobFileIsReportedAsMissingBlobNamingTheFile() throws {
        let (fs, _, path) = try Self.storeWithOneBlob(compressed: false)
        try fs.removeFile(path)
        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        Self.expectEveryReadFails(store, code: .missingBlob, path: path, "removed")
        #expect(try store.contains(bytes("key")))
        try store.close()
    }

    @Test(arguments: [false, true])
    func truncatedOrExtendedBlobFileIsCorruptionNamingTheFile(compressed: Bool) throws {
        let (pristine, _, path) = try Self.storeWithOneBlob(compressed: compressed)
        let original = pristine.contents(of: path)!
        let damaged: [(String, [UInt8])] = [
            ("cut by one byte", Array(original.dropLast())),
            ("cut to the header", Array(original.prefix(Self.headerSize))),
            ("cut mid-chunk", Array(original.prefix(original.count / 2))),
            ("empty", []),
            ("one byte longer", original + [0]),
        ]
        for (label, bytes) in damaged {
            let fs = pristine.clone()
            fs.setContents(bytes, of: path)
            let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
            // Named where the file and its reference part ways.
            Self.expectEveryReadFails(
                store, code: .corruption, path: path, offset: UInt64(min(bytes.count, original.count)),
                "\(label) (compressed: \(compressed))")
            try store.close()
        }
    }

    @Test(arguments: [false, true])
    func flippedBitInBlobHeaderOrChunkTableIsCorruption(compressed: Bool) throws {
        let (pristine, value, path) = try Self.storeWithOneBlob(compressed: compressed)
        let original = pristine.contents(of: path)!
        let tableStart = Self.chunkRanges(original, length: value.count).last!.upperBound
        #expect(original.count - tableStart == 3 * Self.entrySize + 4)
        let bytes = Array(0..<Self.headerSize) + Array(tableStart..<original.count)
        for byte in bytes {
            let fs = pristine.clone()
            fs.flipBit(in: path, atByte: byte, bit: byte % 8)
            let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
            let label = "\(byte < Self.headerSize ? "header" : "table") byte \(byte) (compressed: \(compressed))"
            Self.expectEveryReadFails(store, code: .corruption, path: path, label)
            try store.close()
        }
    }

    /// A blob of one chunk takes `withValue`'s path without parallel verification: a flipped
    /// content bit must still stop the body from running.
    @Test func flippedBitInAOneChunkMappedBlobIsCorruption() throws {
        let fs = FaultInjectingFileSystem()
        var random = SeededGenerator(seed: 9)
        let value = random.bytes(200_000)
        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        try store.write { $0.put(bytes("key"), value) }
        try store.close()
        let path = Self.blobDir + "/" + (try #require(Self.blobFiles(fs).first))
        fs.flipBit(in: path, atByte: Self.headerSize + 1000, bit: 3)
        let reopened = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        var ran = false
        let error = Self.engineError { _ = try reopened.withValue(forKey: bytes("key")) { _ in ran = true } }
        #expect(!ran, "withValue handed out corrupt bytes")
        #expect(error?.code == .corruption)
        #expect(error?.path == path)
        try reopened.close()
    }

    /// A written blob checked against FORMAT.md section 10 from the value alone, so that writer and
    /// reader cannot drift from the document together: header fields and crc32 over bytes
    /// 0..<40; version 4; chunk entries of stored length and XXH3-64 of the stored bytes; a chunk
    /// that did not shrink stored as it is; the table's crc32; and the content checksum, XXH64 of
    /// the chunks' content hashes (XXH3-64, little-endian, in order), in the header and in the
    /// log's reference.
    @Test func writtenMixedBlobMatchesTheDocumentedLayout() throws {
        let fs = FaultInjectingFileSystem()
        var random = SeededGenerator(seed: 12)
        let value = Self.jsonText(Self.chunkSize) + random.bytes(Self.chunkSize) + Self.jsonText(3000)
        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        try store.write { $0.put(bytes("mixed"), value) }
        try store.close()
        let name = try #require(Self.blobFiles(fs).first)
        let file = try #require(fs.contents(of: Self.blobDir + "/" + name))
        func u16(_ at: Int) -> UInt64 { (0..<2).reduce(0) { $0 | UInt64(file[at + $1]) << (8 * $1) } }
        func u32(_ at: Int) -> UInt64 { (0..<4).reduce(0) { $0 | UInt64(file[at + $1]) << (8 * $1) } }
        func u64(_ at: Int) -> UInt64 { (0..<8).reduce(0) { $0 | UInt64(file[at + $1]) << (8 * $1) } }

        #expect(Array(file[0..<8]) == bytes("WALSBLOB"))
        #expect(u16(8) == 4, "format version")
        #expect(file[10] == 1 && file[11] == 0, "zlib encoding, reserved 0")
        #expect(u32(12) == UInt64(Self.chunkSize))
        #expect(name == hex16(u64(16)) + ".blob", "the file is named after the id")
        #expect(u64(24) == UInt64(value.count))
        #expect(u32(40) == UInt64(Self.crc32(file[0..<40])), "header crc32 over bytes 0..<40")

        var expectedContent: [UInt8] = []
        for start in stride(from: 0, to: value.count, by: Self.chunkSize) {
            let hash = XXH3.hash(value[start..<min(start + Self.chunkSize, value.count)])
            withUnsafeBytes(of: hash.littleEndian) { expectedContent.append(contentsOf: $0) }
        }
        let contentChecksum = XXHash64.hash(expectedContent[...])
        #expect(u64(32) == contentChecksum, "content checksum in the header")

        let table = file.count - (3 * Self.entrySize + 4)
        #expect(u32(file.count - 4) == UInt64(Self.crc32(file[table..<file.count - 4])), "table crc32")
        var offset = Self.headerSize
        for index in 0..<3 {
            let entry = table + index * Self.entrySize
            let stored = Int(u32(entry))
            #expect(u64(entry + 4) == XXH3.hash(file[offset..<offset + stored]), "chunk \(index) hash")
            let raw = value[(index * Self.chunkSize)..<min((index + 1) * Self.chunkSize, value.count)]
            if index == 1 {
                #expect(stored == raw.count && Self.same(Array(raw), file[offset..<offset + stored]), "the random chunk is kept as it is")
            } else {
                #expect(stored < raw.count, "chunk \(index) is compressed")
            }
            offset += stored
        }
        #expect(offset == table, "the chunks end where the table starts")

        // The log's reference: id, length, file length, content checksum, encoding.
        let segment = try #require(fs.contents(of: Self.dir + "/0000000000000001.wal"))
        var reference: [UInt8] = []
        for field in [u64(16), UInt64(value.count), UInt64(file.count), contentChecksum] {
            withUnsafeBytes(of: field.littleEndian) { reference.append(contentsOf: $0) }
        }
        reference.append(1)
        #expect(segment.firstRange(of: reference) != nil, "the 33-byte reference is in the log")
    }

    /// Blob files of version 3, whose chunks are hashed with XXH64 (an earlier build's), are read
    /// every way beside the version-4 files (XXH3-64) this build writes; a blob of a version this
    /// build does not know is `unsupportedFormat` naming the file, which is left as it was.
    @Test(arguments: [false, true])
    func blobsOfVersion3AreReadBesideVersion4AndOtherVersionsAreRefused(compressed: Bool) throws {
        let fs = FaultInjectingFileSystem()
        var random = SeededGenerator(seed: 34)
        let old = compressed ? Self.jsonText(2 * Self.chunkSize + 77) : random.bytes(2 * Self.chunkSize + 77)
        let new = compressed ? Self.jsonText(Self.chunkSize + 99) : random.bytes(Self.chunkSize + 99)
        let earlier = try LogStore.open(
            at: Self.dir, options: LogStore.Options(), fileSystem: fs, testHooks: LogStore.TestHooks(blobVersion: 3))
        try earlier.write { $0.put(bytes("old"), old) }
        try earlier.close()
        let oldPath = Self.blobDir + "/" + (try #require(Self.blobFiles(fs).first))
        let oldFile = try #require(fs.contents(of: oldPath))
        #expect(oldFile[8] == 3 && oldFile[9] == 0, "version 3")
        let oldRanges = Self.chunkRanges(oldFile, length: old.count)
        let entry = oldRanges.last!.upperBound + 4
        let firstHash = (0..<8).reduce(UInt64(0)) { $0 | UInt64(oldFile[entry + $1]) << (8 * $1) }
        #expect(firstHash == XXHash64.hash(oldFile[oldRanges[0]]), "a version-3 table holds XXH64s")

        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        try store.write { $0.put(bytes("new"), new) }
        let newPath = Self.blobDir + "/" + (try #require(Self.blobFiles(fs).first { Self.blobDir + "/" + $0 != oldPath }))
        #expect(fs.contents(of: newPath)![8] == 4, "this build writes version 4")
        #expect(try Self.readEveryWay(store, bytes("old")) == old)
        #expect(try Self.readEveryWay(store, bytes("new")) == new)
        try store.close()

        // Version 5, its header checksum recomputed: a newer build's file.
        var newer = fs.contents(of: newPath)!
        newer[8] = 5
        Self.storeUInt32(Self.crc32(newer[0..<40]), in: &newer, at: 40)
        fs.setContents(newer, of: newPath)
        let reopened = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        Self.expectEveryReadFails(reopened, key: bytes("new"), code: .unsupportedFormat, path: newPath, "version 5")
        #expect(try Self.readEveryWay(reopened, bytes("old")) == old)
        try reopened.close()
        #expect(fs.contents(of: newPath) == newer, "the newer file is left as it was")
    }

    @Test(arguments: [false, true])
    func flippedBitInChunkDataIsCorruptionAndNoCorruptByteIsReturned(compressed: Bool) throws {
        let (pristine, value, path) = try Self.storeWithOneBlob(compressed: compressed)
        let original = pristine.contents(of: path)!
        let ranges = Self.chunkRanges(original, length: value.count)
        #expect(ranges.count == 3)
        for (damagedChunk, range) in ranges.enumerated() {
            for byte in [range.lowerBound, range.lowerBound + range.count / 2, range.upperBound - 1] {
                let label = "chunk \(damagedChunk) byte \(byte) (compressed: \(compressed))"
                let fs = pristine.clone()
                fs.flipBit(in: path, atByte: byte, bit: byte % 8)
                let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
                // Named by the damaged chunk's offset.
                Self.expectEveryReadFails(store, code: .corruption, path: path, offset: UInt64(range.lowerBound), label)

                // The stream hands out the intact chunks before the damaged one, each exactly
                // right, then throws instead of returning the damaged one.
                var stream = try #require(try store.valueStream(forKey: bytes("key")), "\(label)")
                for index in 0..<damagedChunk {
                    let chunk = try stream.next()
                    let start = index * Self.chunkSize
                    #expect(chunk.map { Self.same($0, value[start..<start + $0.count]) } == true, "\(label): chunk \(index)")
                }
                let error = Self.engineError { _ = try stream.next() }
                #expect(error?.code == .corruption, "\(label)")
                #expect(error?.path == path, "\(label)")
                #expect(error?.offset == UInt64(range.lowerBound), "\(label)")
                // Asked again, the stream fails the same way: it never skips the damaged chunk.
                let again = Self.engineError { _ = try stream.next() }
                #expect(again?.code == .corruption && again?.offset == UInt64(range.lowerBound), "\(label): again")
                try store.close()
            }
        }
    }

    /// zlib's crc32, bit by bit (the test's own, to forge a chunk table).
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 != 0 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1 }
        }
        return ~crc
    }

    static func storeUInt32(_ value: UInt32, in bytes: inout [UInt8], at offset: Int) {
        for i in 0..<4 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * i)) }
    }

    static func storeUInt64(_ value: UInt64, in bytes: inout [UInt8], at offset: Int) {
        for i in 0..<8 { bytes[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * i)) }
    }

    /// The last chunk changed and the chunk table rewritten to match it: every chunk and the table
    /// pass their checksums, only the whole-content checksum in the header tells. The stream must
    /// check it before it hands out the last chunk.
    @Test func chunkRewrittenWithAMatchingTableIsCaughtByTheContentChecksumBeforeItIsReturned() throws {
        let (fs, value, path) = try Self.storeWithOneBlob(compressed: false)
        var file = fs.contents(of: path)!
        let ranges = Self.chunkRanges(file, length: value.count)
        let table = ranges.last!.upperBound
        let entry = table + (ranges.count - 1) * Self.entrySize + 4
        let stored = (0..<8).reduce(UInt64(0)) { $0 | UInt64(file[entry + $1]) << (8 * $1) }
        #expect(XXH3.hash(file[ranges.last!]) == stored, "the table holds the chunk's XXH3-64")
        #expect(
            Self.crc32(file[table..<file.count - 4]) == (0..<4).reduce(UInt32(0)) { $0 | UInt32(file[file.count - 4 + $1]) << (8 * $1) },
            "the test's crc32 is zlib's")

        file[ranges.last!.lowerBound + 7] ^= 0x10
        Self.storeUInt64(XXH3.hash(file[ranges.last!]), in: &file, at: entry)
        Self.storeUInt32(Self.crc32(file[table..<file.count - 4]), in: &file, at: file.count - 4)
        fs.setContents(file, of: path)

        let store = try LogStore.open(at: Self.dir, options: LogStore.Options(), fileSystem: fs)
        Self.expectEveryReadFails(store, code: .corruption, path: path, "forged last chunk")
        var stream = try #require(try store.valueStream(forKey: bytes("key")))
        for index in 0..<ranges.count - 1 {
            let chunk = try stream.next()
            let start = index * Self.chunkSize
            #expect(chunk.map { Self.same($0, value[start..<start + $0.count]) } == true, "chunk \(index)")
        }
        let error = Self.engineError { _ = try stream.next() }
        #expect(error?.code == .corruption, "the forged last chunk was returned")
        #expect(error?.path == path)
        try store.close()
    }

    // MARK: 6. Power loss during a commit that writes blobs

    static let crashSource = "/outside/asset.bin"

    /// The store before the commit under test (closed), and the contents before and after it.
    static func crashSetup() throws -> (FaultInjectingFileSystem, WriteBatch, [[UInt8]: [UInt8]], [[UInt8]: [UInt8]]) {
        let fs = FaultInjectingFileSystem()
        var random = SeededGenerator(seed: 6)
        // Over 4 MiB, so the blob goes out in several writes (and its header last).
        let asset = random.bytes(4 * chunkSize + 54321)
        try makeFile(fs, crashSource, asset)
        let old: [[UInt8]: [UInt8]] = [
            bytes("big"): random.bytes(2000),
            bytes("ext"): bytes("old external value"),
            bytes("small"): bytes("old"),
        ]
        let store = try LogStore.open(at: dir, options: options(threshold: 1000), fileSystem: fs)
        try store.write { batch in
            batch.put(bytes("big"), old[bytes("big")]!)
            batch.putExternal(bytes("ext"), old[bytes("ext")]!)
            batch.put(bytes("small"), old[bytes("small")]!)
        }
        try store.close()
        #expect(blobFiles(fs).count == 2)

        var new = old
        new[bytes("big")] = random.bytes(3000)  // a blob by the threshold
        new[bytes("ext")] = asset  // a blob by putExternal
        new[bytes("small")] = bytes("new")  // inline
        new[bytes("added")] = bytes("added")  // inline
        var batch = WriteBatch()
        batch.put(bytes("big"), new[bytes("big")]!)
        batch.putExternal(bytes("ext"), contentsOfFile: crashSource)
        batch.put(bytes("small"), new[bytes("small")]!)
        batch.put(bytes("added"), new[bytes("added")]!)
        return (fs, batch, old, new)
    }

    enum Crash: String, CaseIterable, Sendable { case powerLoss, processCrash }

    @Test(arguments: Crash.allCases)
    func crashAtEveryOperationOfABlobCommitLeavesAllOrNothingAndNoOrphans(crash: Crash) throws {
        let (base, batch, old, new) = try Self.crashSetup()
        var crashAt = 1
        var completed = false
        while !completed {
            let label = "\(crash) at operation \(crashAt)"
            let fs = base.clone()
            let store = try LogStore.open(at: Self.dir, options: Self.options(threshold: 1000), fileSystem: fs)
            fs.crash(atOperation: crashAt)
            let before = fs.operationCount
            let acknowledged = (try? store.commit(batch)) != nil
            completed = acknowledged && fs.operationCount - before < crashAt
            switch crash {
            case .powerLoss: fs.powerLoss()
            case .processCrash: fs.processCrash()
            }
            try? store.close()  // the dead process's handles: a no-op

            let leftBehind = fs.names(in: Self.blobDir).filter { $0.hasSuffix(".blob") || $0.hasSuffix(".blob-tmp") }
            let reopened = try LogStore.open(at: Self.dir, options: Self.options(threshold: 1000), fileSystem: fs)
            reopened.collectBlobsFoundAtOpen()  // the background collection, done by now
            let contents = try reopened.contents()
            #expect(contents == old || contents == new, "\(label): neither the old state nor the new")
            if acknowledged { #expect(contents == new, "\(label): an acknowledged commit is lost") }
            for key in [bytes("big"), bytes("ext")] {
                #expect(try Self.readEveryWay(reopened, key) == contents[key], "\(label)")
            }

            // Exactly the referenced blob files remain; the collection open started removed the rest
            // and counted them.
            let names = fs.names(in: Self.blobDir)
            let stats = reopened.statistics
            #expect(!names.contains { $0.hasSuffix(".blob-tmp") }, "\(label): temporary files left: \(names)")
            #expect(names.count == 2 && stats.blobCount == 2, "\(label): blob files \(names)")
            #expect(stats.blobBytes == names.reduce(0) { $0 + UInt64(fs.contents(of: Self.blobDir + "/" + $1)!.count) }, "\(label)")
            #expect(stats.recovery.removedBlobs == leftBehind.count - names.count, "\(label): left \(leftBehind)")
            #expect(
                stats.blobCollection == .init(found: leftBehind.count - names.count, removed: leftBehind.count - names.count, pending: false),
                "\(label)")

            // The store takes new blobs where recovery left it.
            try reopened.write { $0.putExternal(bytes("later"), bytes("later blob")) }
            try reopened.close()
            let again = try LogStore.open(at: Self.dir, options: Self.options(threshold: 1000), fileSystem: fs)
            var expected = contents
            expected[bytes("later")] = bytes("later blob")
            #expect(try again.contents() == expected, "\(label): second reopen")
            #expect(again.statistics.recovery.removedBlobs == 0, "\(label)")
            #expect(fs.names(in: Self.blobDir).count == 3, "\(label)")
            try again.close()

            crashAt += 1
            if crashAt > 200 {
                Issue.record("the commit never completed")
                break
            }
        }
        // Two blob files (create, truncate, write, sync; one of them several writes), the
        // directory sync, the frame's write and sync.
        #expect(crashAt > 14, "only \(crashAt - 1) operations")
    }

    /// An I/O error (ENOSPC) at each operation of the commit. While the blobs are being written,
    /// the commit fails, every file it wrote is removed at once, and the store takes the commit
    /// when it is retried; wherever the error strikes, a reopen leaves only referenced blobs.
    @Test func failedOperationWhileWritingBlobsRemovesWhatWasWrittenAndKeepsTheStoreWritable() throws {
        let (base, batch, old, new) = try Self.crashSetup()
        let originalNames = base.names(in: Self.blobDir).sorted()
        var failAt = 1
        var blobFailures = 0
        while failAt <= 200 {
            let fs = base.clone()
            let store = try LogStore.open(at: Self.dir, options: Self.options(threshold: 1000), fileSystem: fs)
            let before = fs.operationCount
            fs.fail(failAt, errno: 28)
            let error = Self.engineError { try store.commit(batch) }
            let log = fs.operationLog
            guard before + failAt <= log.count else {
                #expect(error == nil)
                #expect(try store.contents() == new)
                try? store.close()  // the armed fault may strike here
                break
            }
            let failed = log[before + failAt - 1]
            let label = "ENOSPC at operation \(failAt) (\(failed))"
            if error == nil {
                // Only a segment write carrying preallocated zeros is written again without them.
                #expect(failed.kind == .write && failed.path.hasSuffix(".wal") && store.statistics.preallocationSuspended, "\(label)")
                #expect(try store.contents() == new, "\(label)")
            }
            #expect(error == nil || (error?.code == .io && error?.errno == 28), "\(label): \(String(describing: error))")
            if failed.path.hasPrefix(Self.blobDir) {
                blobFailures += 1
                #expect(fs.names(in: Self.blobDir).sorted() == originalNames, "\(label): files left behind")
                #expect(try store.contents() == old, "\(label)")
                #expect(throws: Never.self, "\(label): retry") { try store.commit(batch) }
                #expect(try store.contents() == new, "\(label): after the retry")
            }
            try? store.close()

            let reopened = try LogStore.open(at: Self.dir, options: Self.options(threshold: 1000), fileSystem: fs)
            reopened.collectBlobsFoundAtOpen()  // the background collection, done by now
            let contents = try reopened.contents()
            #expect(contents == old || contents == new, "\(label): reopened")
            let names = fs.names(in: Self.blobDir)
            #expect(names.count == reopened.statistics.blobCount, "\(label): \(names)")
            #expect(!names.contains { $0.hasSuffix(".blob-tmp") }, "\(label): \(names)")
            try reopened.close()
            failAt += 1
        }
        // "big": create, truncate, write, sync; "ext" (from a file, over 4 MiB): create, truncate,
        // two writes and the header's, sync; then the directory's sync.
        #expect(blobFailures >= 11, "only \(blobFailures) operations on blob files")
        #expect(failAt <= 200, "the commit never completed")
    }

    // MARK: 7. Compaction collects replaced blobs

    @Test func compactionRemovesTheBlobsOfOverwrittenAndDeletedKeys() throws {
        let fs = FaultInjectingFileSystem()
        var random = SeededGenerator(seed: 7)
        var store = try LogStore.open(at: Self.dir, options: Self.options(threshold: 1000), fileSystem: fs)
        var model: [[UInt8]: [UInt8]] = [:]
        var fileOf: [String: String] = [:]
        for name in ["a", "b", "c", "d"] {
            let before = Set(Self.blobFiles(fs))
            model[bytes(name)] = random.bytes(2000)
            try store.write { $0.put(bytes(name), model[bytes(name)]!) }
            let file = try #require(Self.blobFiles(fs).first { !before.contains($0) })
            fileOf[name] = file
        }
        // Nothing is collected while every blob is live.
        #expect(try store.compact().blobsRemoved == 0)
        #expect(Set(Self.blobFiles(fs)) == Set(fileOf.values))

        let before = Set(Self.blobFiles(fs))
        model[bytes("a")] = random.bytes(3000)  // blob over blob
        model[bytes("b")] = bytes("inline now")  // inline over blob
        model[bytes("c")] = nil
        try store.write { batch in
            batch.put(bytes("a"), model[bytes("a")]!)
            batch.put(bytes("b"), model[bytes("b")]!)
            batch.delete(bytes("c"))
        }
        let newA = try #require(Self.blobFiles(fs).first { !before.contains($0) })
        #expect(Self.blobFiles(fs).count == 5, "old blobs stay until a compaction")

        let report = try store.compact()
        #expect(report.blobsRemoved == 3)
        #expect(store.statistics.lastCompaction?.blobsRemoved == 3)
        #expect(Set(Self.blobFiles(fs)) == [newA, fileOf["d"]!])
        #expect(store.statistics.blobCount == 2)
        for key in model.keys { #expect(try Self.readEveryWay(store, key) == model[key]) }
        #expect(try store.value(forKey: bytes("c")) == nil)
        #expect(try store.contents() == model)

        try store.close()
        store = try LogStore.open(at: Self.dir, options: Self.options(threshold: 1000), fileSystem: fs)
        #expect(try store.contents() == model)
        #expect(store.statistics.recovery.removedBlobs == 0)
        #expect(Set(Self.blobFiles(fs)) == [newA, fileOf["d"]!])
        try store.close()
    }

    // MARK: 8. Missing external source

    @Test(arguments: Medium.allCases)
    func externalSourceThatDoesNotExistFailsTheCommitAndChangesNothing(medium: Medium) throws {
        let home = Home(medium)
        defer { home.remove() }
        var random = SeededGenerator(seed: 8)
        var store = try home.open(Self.options(threshold: 1000))
        let model: [[UInt8]: [UInt8]] = [bytes("k"): bytes("external"), bytes("inline"): bytes("old")]
        try store.write { batch in
            batch.putExternal(bytes("k"), model[bytes("k")]!)
            batch.put(bytes("inline"), model[bytes("inline")]!)
        }
        let names = home.blobDirectoryNames().sorted()
        #expect(names.count == 1)
        let sequence = store.statistics.lastSequence

        // A blob written before the failing source must be removed again too.
        let missing = home.outside("no-such-file.bin")
        var batch = WriteBatch()
        batch.put(bytes("big"), random.bytes(5000))
        batch.put(bytes("inline"), bytes("new"))
        batch.putExternal(bytes("k"), contentsOfFile: missing)
        let error = Self.engineError { try store.commit(batch) }
        #expect(error?.code == .io)
        #expect(error?.path == missing)

        #expect(home.blobDirectoryNames().sorted() == names, "no blob file and no temporary file left")
        #expect(store.statistics.lastSequence == sequence)
        #expect(store.statistics.blobCount == 1)
        #expect(try store.contents() == model)
        #expect(try Self.readEveryWay(store, bytes("k")) == model[bytes("k")])

        // The store stays writable, and reopening finds nothing to collect.
        try store.write { $0.put(bytes("after"), bytes("x")) }
        try store.close()
        store = try home.open(Self.options(threshold: 1000))
        #expect(store.statistics.recovery.removedBlobs == 0)
        #expect(home.blobDirectoryNames().sorted() == names)
        var expected = model
        expected[bytes("after")] = bytes("x")
        #expect(try store.contents() == expected)
        try store.close()
    }
}
