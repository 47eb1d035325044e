#ifndef WALSTORE_BENCH_CTABLEFLOOR_H
#define WALSTORE_BENCH_CTABLEFLOOR_H

// A plain C11 reader of one WALStore table file (FORMAT.md, "Table files"), table version 4 or
// 5, only libc and zlib: the floor beside walstore-bench's readseq-cached and readrandom-cached
// rows.
//
// ctf_open reads the whole file and checks the footer (magic, version 4 or 5, crc32, handles
// tiling the file) and every stored block's trailer (type byte and crc32). Version 4: the
// footer's checksums of the filter and index blocks' contents. Version 5: the footer's checksum
// of the top-level index's contents and its partition count; the top-level index whole (an entry
// per partition, naming the filter and index partitions back to back and the run's first data
// block); each filter partition's shape; each index partition whole (every entry a restart
// point, its handles tiling its run of data blocks, its last separator the top-level entry's).
// It inflates every data block once into one buffer (version 5: every index partition too, into
// another), and checks every entry of the index and data blocks as FORMAT.md states (restart
// points, varint sizes, shared prefixes, keys strictly ascending across the table, entry values,
// handles tiling the data blocks, separators between blocks). After that nothing is checked
// again: ctf_scan, ctf_lookup_all, ctf_get and the cursor decode the blocks in place, trusting
// what ctf_open verified.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ctf_table ctf_table;
typedef struct ctf_cursor ctf_cursor;

/// One entry of a data block, as decoded in place.
typedef struct ctf_entry {
    /// The key (the cursor's buffer; NULL from ctf_get, whose caller has the key).
    const uint8_t *key;
    uint32_t key_length;
    /// 1 = value, 2 = tombstone, 3 = blob reference.
    uint8_t kind;
    uint64_t sequence;
    /// Kind 1: the value's bytes; kind 3: the 33-byte blob reference; kind 2: none.
    const uint8_t *value;
    uint32_t value_length;
} ctf_entry;

/// What ctf_scan decoded: entries, their key and value bytes, and two sums that keep every
/// decoded field in use.
typedef struct ctf_scan_totals {
    uint64_t entries;
    uint64_t key_bytes;
    uint64_t value_bytes;
    uint64_t sequence_sum;
    uint64_t key_check;
} ctf_scan_totals;

/// Opens, checks and loads the table at `path` (see above). NULL on failure, with a message in
/// `error` (at most `error_capacity` bytes, NUL included).
ctf_table *ctf_open(const char *path, char *error, size_t error_capacity);
void ctf_close(ctf_table *table);

/// Data blocks, entries (tombstones and blob references included), the file's size, the data
/// blocks' inflated bytes (their contents, restart arrays included), and how many data blocks
/// were stored as zlib streams.
size_t ctf_block_count(const ctf_table *table);
uint64_t ctf_entry_count(const ctf_table *table);
uint64_t ctf_file_bytes(const ctf_table *table);
uint64_t ctf_inflated_bytes(const ctf_table *table);
size_t ctf_zlib_block_count(const ctf_table *table);
/// The table's format version: 4 or 5.
unsigned ctf_version(const ctf_table *table);
/// Version 5: the partitions (each a filter and an index partition); version 4: 0.
size_t ctf_partition_count(const ctf_table *table);

/// Decodes every entry of every data block in order, in place: the key rebuilt into one
/// buffer, the value found, its kind byte and sequence varint decoded, its length added up.
void ctf_scan(const ctf_table *table, ctf_scan_totals *totals);

/// Looks `key` up, in place: version 5, a binary search of the top-level index's separators
/// (each partition's last) for the index partition, then of that partition's separators for
/// the data block; version 4, a binary search of the index block's separators; then a binary
/// search of the block's restart points and a walk of the restart interval. 1 and `*entry`
/// when the table holds the key (whatever its kind), else 0.
int ctf_get(const ctf_table *table, const uint8_t *key, size_t key_length, ctf_entry *entry);

/// ctf_get for `count` keys, key i being keys[offsets[i] ..< offsets[i + 1]] (`offsets` has
/// count + 1 elements). Returns how many were found with a value (kind 1); `*value_bytes` gets
/// the sum of their lengths.
uint64_t ctf_lookup_all(const ctf_table *table, const uint8_t *keys, const uint64_t *offsets, size_t count,
                        uint64_t *value_bytes);

/// A cursor over every entry in order, for checking the decoder against another reader.
ctf_cursor *ctf_cursor_open(const ctf_table *table);
/// 1 and the next entry (its key valid until the next call), or 0 at the end.
int ctf_cursor_next(ctf_cursor *cursor, ctf_entry *entry);
void ctf_cursor_close(ctf_cursor *cursor);

/// zlib's crc32 of `count` bytes, continuing from `crc` (0 to start).
uint32_t ctf_crc32(uint32_t crc, const void *bytes, size_t count);

#ifdef __cplusplus
}
#endif

#endif
