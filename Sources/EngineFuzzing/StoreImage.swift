import Engine
import EngineTestSupport

/// A store directory's files packed into one fuzz input, and unpacked into an in-memory file
/// system for `LogStore.open`.
///
/// The input is a run of entries, each `kind(1) number(1) length(4, little-endian)` then that
/// many bytes (fewer when the input ends first). The kind (modulo 8) and number name the file:
///
/// | kind | file                                   |
/// |------|----------------------------------------|
/// | 0    | `<number>.wal` (a segment)             |
/// | 1    | `<number>.walhint` (a segment hint)    |
/// | 2    | `<number>.pack` (format 3, upgraded at open) |
/// | 3    | `<number>.hint` (a pack's hint)        |
/// | 4    | `MANIFEST`                             |
/// | 5    | `blobs/<number>.blob`                  |
/// | 6    | a temporary file, by number modulo 6: `MANIFEST-tmp`, `<number>.pack-tmp`, `<number>.hint-tmp`, `blobs/<number>.blob-tmp`, `<number>.walhint-tmp`, `<number>.sst-tmp` |
/// | 7    | `<number>.sst` (a sorted table)        |
///
/// where `<number>` is 16 hex digits of the number byte `n` widened (``fileNumber(_:)``): `n`
/// itself below 0xE0; `2^63 + (n - 0xE0)` for 0xE0...0xEF (the bit that marks packs in the
/// index); `UInt64.max - (0xFF - n)` for 0xF0...0xFF (numbers with no successor). A later entry
/// naming the same file replaces it.
public struct StoreImage: Sendable {
    public struct File: Sendable, Equatable {
        public var kind: UInt8
        public var number: UInt8
        public var bytes: [UInt8]
    }

    public var files: [File]
    static let directory = "/store"

    public init(files: [File]) { self.files = files }

    /// Parses an input; with `repair`, the checksums of each file are repaired by its kind
    /// (a blob's content checksum is left alone: the log's reference must still match it).
    public init(_ input: [UInt8], repair: Bool = false) {
        var files: [File] = []
        var offset = 0
        while input.count - offset >= 6 {
            let kind = input[offset] % 8
            let number = input[offset + 1]
            let declared = Int(Repair.load32(input, offset + 2))
            offset += 6
            let length = min(declared, input.count - offset)
            var bytes = Array(input[offset..<offset + length])
            offset += length
            if repair {
                switch kind {
                case 0: Repair.segment(&bytes)
                case 1, 3, 4: Repair.trailingChecksum(&bytes)
                case 2: Repair.pack(&bytes)
                case 5: Repair.blob(&bytes, content: false)
                case 7: DecoderHooks.repairTable(&bytes)
                default: break
                }
            }
            files.append(File(kind: kind, number: number, bytes: bytes))
        }
        self.files = files
    }

    /// The input that parses back into these files.
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        for file in files {
            out.append(file.kind)
            out.append(file.number)
            var length = [UInt8](repeating: 0, count: 4)
            Repair.store32(&length, 0, UInt32(file.bytes.count))
            out += length
            out += file.bytes
        }
        return out
    }

    /// The file number a number byte stands for.
    static func fileNumber(_ byte: UInt8) -> UInt64 {
        switch byte {
        case 0..<0xE0: UInt64(byte)
        case 0xE0..<0xF0: 1 << 63 | UInt64(byte - 0xE0)
        default: UInt64.max - UInt64(0xFF - byte)
        }
    }

    /// The path (under ``directory``) of a file of `kind` and `number`.
    static func path(kind: UInt8, number: UInt8) -> String {
        let n = hex16(fileNumber(number))
        let name =
            switch kind % 8 {
            case 0: n + ".wal"
            case 1: n + ".walhint"
            case 2: n + ".pack"
            case 3: n + ".hint"
            case 4: "MANIFEST"
            case 5: "blobs/" + n + ".blob"
            case 7: n + ".sst"
            default:
                switch number % 6 {
                case 0: "MANIFEST-tmp"
                case 1: n + ".pack-tmp"
                case 2: n + ".hint-tmp"
                case 3: "blobs/" + n + ".blob-tmp"
                case 4: n + ".walhint-tmp"
                default: n + ".sst-tmp"
                }
            }
        return directory + "/" + name
    }

    /// The files of the store at `directory` in `fileSystem` (those a kind names; the lock file
    /// and any other file are left out).
    static func capture(_ directory: String, in fileSystem: FaultInjectingFileSystem) -> StoreImage {
        var files: [File] = []
        var names = fileSystem.names(in: directory).map { ($0, $0) }
        names += fileSystem.names(in: directory + "/blobs").map { ("blobs/" + $0, $0) }
        for (relative, name) in names.sorted(by: { $0.0 < $1.0 }) {
            guard let bytes = fileSystem.contents(of: directory + "/" + relative) else { continue }
            let stem = name.split(separator: ".").first.map(String.init) ?? ""
            let number = stem.count == 16 ? UInt64(stem, radix: 16) : nil
            let kind: UInt8? =
                if relative == "MANIFEST" { 4 } else if relative.hasPrefix("blobs/"), name.hasSuffix(".blob") { 5 } else if name.hasSuffix(".wal") {
                    0
                } else if name.hasSuffix(".walhint") { 1 } else if name.hasSuffix(".pack") { 2 } else if name.hasSuffix(".hint") {
                    3
                } else if name.hasSuffix(".sst") { 7 } else { nil }
            guard let kind, kind == 4 || (number.map { $0 < 0xE0 } ?? false) else { continue }
            files.append(File(kind: kind, number: UInt8(number ?? 0), bytes: bytes))
        }
        return StoreImage(files: files)
    }

    /// The options the store target opens with: small segments, no background work.
    static var options: LogStore.Options {
        var options = LogStore.Options()
        options.segmentSize = 64 << 10
        options.preallocationSize = 4 << 10
        options.compaction = .manual
        options.writesSegmentHints = false
        return options
    }

    /// Lays the files out in an in-memory file system, opens the store, reads every key every
    /// way there is, commits once, closes, and does it all again on the files the first open
    /// left. Throws the first error that stops it.
    public func openAndReadAll() throws(EngineError) {
        let fileSystem = FaultInjectingFileSystem()
        _ = try fileSystem.createDirectory(Self.directory)
        _ = try fileSystem.createDirectory(Self.directory + "/blobs")
        for file in files {
            try FuzzTarget.write(file.bytes, to: Self.path(kind: file.kind, number: file.number), in: fileSystem)
        }
        for round in 0..<2 {
            let store = try LogStore.open(at: Self.directory, options: Self.options, fileSystem: fileSystem)
            Self.readAll(store)
            if round == 0 { _ = try store.write { $0.put([0x66, 0x75, 0x7A, 0x7A], [1, 2, 3]) } }
            try store.close()
        }
    }

    /// Reads every key's value through a scan, a point read and a stream; errors are fine.
    static func readAll(_ store: LogStore) {
        guard var scan = try? store.scan() else { return }
        while let entry = try? scan.next() {
            _ = try? entry.value()
            _ = try? store.value(forKey: entry.key)
            _ = try? store.contains(entry.key)
            if var stream = try? store.valueStream(forKey: entry.key) {
                do throws(EngineError) {
                    while try stream.next() != nil {}
                } catch {}
            }
        }
        if var reverse = try? store.scan(.all, limit: nil, reverse: true) {
            while (try? reverse.next()) != nil {}
        }
    }

    static func hex16(_ value: UInt64) -> String {
        let hex = String(value, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
