/// The upgrade of a format-3 store (compacted into packs) to format 4 at open (FORMAT.md,
/// "Upgrading a format-3 store"): all or nothing. Each pack's records (verified block by block)
/// become one level-1 table; the tables are renamed into place and a format-4 manifest naming
/// them, with the same log start and last sequence, replaces the format-3 one by the usual
/// rename. Only then are the packs and their hints removed (by open, as leftovers). A crash
/// before the rename leaves the format-3 store (its tables are leftovers the next attempt
/// removes first); after it, the format-4 store. Segments and segment hints are the same in
/// both formats and are kept as they are.
enum Upgrade {
    static func run(
        _ old: ManifestV3, directory: String, names: [String], fileSystem: any FileSystem, options: LogStore.Options
    ) throws(EngineError) -> Manifest {
        let present = Set(names)
        for pack in old.packs where !present.contains(PackFile.name(pack)) {
            throw .corruption(
                "pack \(PackFile.name(pack)) is listed in the format-3 manifest but missing",
                path: directory + "/" + PackFile.name(pack), offset: 0)
        }
        guard present.contains(SegmentFile.name(old.logStart)) else {
            throw .corruption(
                "segment \(old.logStart), where the log continues after the last compaction, is missing",
                path: directory + "/" + SegmentFile.name(old.logStart), offset: 0)
        }
        // What an interrupted attempt left: a format-3 manifest lists no table.
        var removed = false
        for name in names where name == LogFormat.manifestTemporaryName || StoreTable.number(fromName: name) != nil {
            removed = (try? fileSystem.removeFile(directory + "/" + name)) != nil || removed
        }
        if removed { try fileSystem.syncDirectory(directory) }

        var tables: [Manifest.Table] = []
        var number: UInt64 = 1
        // Newest first: of two packs holding one key (only a damaged store has that), the later wins.
        for (pack, recordedSize) in zip(old.packs, old.packSizes).reversed() {
            let file = try fileSystem.openFile(directory + "/" + PackFile.name(pack), create: false)
            try PackFile.checkHeader(of: file, number: pack)
            let size = try file.size()
            guard size == recordedSize else {
                throw .corruption(
                    "pack is \(size) bytes but the manifest records \(recordedSize) (cut short or added to)",
                    path: file.path, offset: min(size, recordedSize))
            }
            var writer = try TableWriter(number: number, level: 1, directory: directory, options: options, fileSystem: fileSystem)
            do throws(EngineError) {
                try PackFile.forEachBlock(of: file, number: pack) { blockOffset, _, raw, records throws(EngineError) in
                    for record in records {
                        let value: TableEntry.Value =
                            if let blob = record.blob {
                                .blob(blob)
                            } else {
                                .value(Array(raw[record.valueOffset..<record.valueOffset + record.valueLength!]))
                            }
                        do throws(EngineError) {
                            try writer.add(TableEntry(key: record.key, sequence: record.sequence!, value: value))
                        } catch  where error.code == .invalidArgument {
                            // The table refuses the entry (out of order): the pack is damaged. Any
                            // other error is the table's own I/O, and is thrown as it is.
                            throw .corruption("pack records are not in ascending key order", path: file.path, offset: blockOffset)
                        }
                    }
                }
                if writer.entryCount > 0 {
                    tables.append(try writer.finish())
                    try fileSystem.rename(writer.temporaryPath, to: writer.finalPath)
                } else {
                    try fileSystem.removeFile(writer.temporaryPath)
                }
            } catch {
                // Its temporary table and scratch file; the next attempt removes anything left.
                writer.discard()
                throw error
            }
            number += 1
        }
        try fileSystem.syncDirectory(directory)
        let manifest = Manifest(logStart: old.logStart, lastSequence: old.lastSequence, tables: tables)
        let temporary = directory + "/" + LogFormat.manifestTemporaryName
        try HintFile.writeSynced(manifest.encoded(), to: temporary, fileSystem: fileSystem)
        try fileSystem.rename(temporary, to: directory + "/" + LogFormat.manifestName)
        try fileSystem.syncDirectory(directory)
        return manifest
    }
}
