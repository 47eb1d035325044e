import CMalloc

/// glibc's heap bytes in use, from `mallinfo2()`: `uordblks` (bytes allocated from the main
/// arena) plus `hblkhd` (large blocks served directly by `mmap`; a big hash table's storage lands
/// there, so `uordblks` alone would miss it).
struct HeapUsage {
    var arena: Int
    var mmapped: Int

    var total: Int { arena + mmapped }

    /// The figures now.
    static func now() -> HeapUsage? {
        let info = mallinfo2()
        return HeapUsage(arena: Int(info.uordblks), mmapped: Int(info.hblkhd))
    }

    static func - (after: HeapUsage, before: HeapUsage) -> HeapUsage {
        HeapUsage(arena: after.arena - before.arena, mmapped: after.mmapped - before.mmapped)
    }
}
