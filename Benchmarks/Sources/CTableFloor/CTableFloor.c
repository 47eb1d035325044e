// A plain C11 reader of one WALStore table file: see include/CTableFloor.h and FORMAT.md,
// "Table files". Only libc and zlib.

#include "CTableFloor.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

enum {
    FOOTER_SIZE = 60,
    TRAILER_SIZE = 5,
    MAX_KEY = 65535,
    KIND_VALUE = 1,
    KIND_TOMBSTONE = 2,
    KIND_BLOB = 3,
    BLOB_REFERENCE_SIZE = 33,
    MIN_FILTER_BYTES = 64 / 8 + 1,
    MAX_FILTER_PROBES = 30,
};

#define SEQUENCE_LIMIT (UINT64_C(1) << 62)
#define MAX_INFLATED (UINT64_C(257) << 20)
/// The longest stored block: the longest raw contents, a zlib block's raw length, the trailer.
#define MAX_STORED (MAX_INFLATED + 4 + TRAILER_SIZE)

/// A data block's contents in memory, its restart array at data + entries_end.
typedef struct ctf_block {
    const uint8_t *data;
    uint32_t entries_end;
    uint32_t restart_count;
} ctf_block;

/// An index block's contents in memory (version 5: an index partition's; version 4: the index
/// block's), its restart array at data + entries_end: every entry is a restart point, so entry
/// i is at restart i and names data block first_block + i.
typedef struct ctf_index {
    const uint8_t *data;
    uint32_t entries_end;
    uint32_t count;
    size_t first_block;
} ctf_index;

struct ctf_table {
    /// 4 or 5.
    unsigned version;
    /// Every data block's contents, inflated, back to back.
    uint8_t *arena;
    ctf_block *blocks;
    size_t block_count;
    /// Version 5: the top-level index's contents (entry p, at restart p, names partition p);
    /// NULL in version 4.
    uint8_t *top;
    uint32_t top_entries_end;
    /// Every index partition's contents, inflated, back to back (version 4: the index block's).
    uint8_t *index_arena;
    /// Version 5: one per partition; version 4: one, the index block.
    ctf_index *indexes;
    uint32_t index_count;
    uint64_t entry_count;
    uint64_t file_bytes;
    uint64_t inflated_bytes;
    size_t zlib_blocks;
};

struct ctf_cursor {
    const ctf_table *table;
    size_t block;
    const uint8_t *next;
    uint8_t key[MAX_KEY + 1];
};

// ---- Helpers -------------------------------------------------------------------------------

static void fail(char *error, size_t capacity, const char *format, ...) {
    if (error == NULL || capacity == 0) return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(error, capacity, format, arguments);
    va_end(arguments);
}

static inline uint32_t load32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t load64(const uint8_t *p) { return (uint64_t)load32(p) | (uint64_t)load32(p + 4) << 32; }

static uint32_t crc(const uint8_t *bytes, size_t count) { return (uint32_t)crc32_z(0, bytes, (z_size_t)count); }

/// A checked LEB128 varint of at most `max_bytes` bytes (5: a u32; 10: a u64) in [p, end):
/// its length in bytes, or 0 when it runs past `end`, is too long or overflows.
static size_t checked_varint(const uint8_t *p, const uint8_t *end, size_t max_bytes, uint64_t *value) {
    uint64_t result = 0;
    for (size_t i = 0; i < max_bytes && p + i < end; i++) {
        uint64_t group = p[i] & 0x7f;
        if (i == 9 && group > 1) return 0;
        result |= group << (7 * i);
        if (p[i] < 0x80) {
            if (max_bytes == 5 && result > UINT32_MAX) return 0;
            *value = result;
            return i + 1;
        }
    }
    return 0;
}

/// An unchecked varint of at most 5 bytes (the blocks were checked at open).
static inline const uint8_t *varint32(const uint8_t *p, uint32_t *value) {
    uint32_t byte = *p++;
    if (byte < 0x80) {
        *value = byte;
        return p;
    }
    uint32_t result = byte & 0x7f;
    for (unsigned shift = 7;; shift += 7) {
        byte = *p++;
        result |= (byte & 0x7f) << shift;
        if (byte < 0x80) break;
    }
    *value = result;
    return p;
}

/// An unchecked varint of at most 10 bytes.
static inline const uint8_t *varint64(const uint8_t *p, uint64_t *value) {
    uint64_t byte = *p++;
    if (byte < 0x80) {
        *value = byte;
        return p;
    }
    uint64_t result = byte & 0x7f;
    for (unsigned shift = 7;; shift += 7) {
        byte = *p++;
        result |= (byte & 0x7f) << shift;
        if (byte < 0x80) break;
    }
    *value = result;
    return p;
}

/// memcmp order, a shorter key before its extensions.
static inline int compare_keys(const uint8_t *a, size_t a_length, const uint8_t *b, size_t b_length) {
    size_t common = a_length < b_length ? a_length : b_length;
    int order = common == 0 ? 0 : memcmp(a, b, common);
    if (order != 0) return order;
    return (a_length > b_length) - (a_length < b_length);
}

// ---- Stored blocks -------------------------------------------------------------------------

/// A stored block whose trailer was checked: its stored contents, type and raw length.
typedef struct stored_block {
    const uint8_t *contents;
    size_t contents_length;
    uint8_t type;
    uint64_t raw_length;
} stored_block;

/// Checks the stored block at [offset, offset + length) of the file: inside it, its type byte,
/// the crc32 of its contents and type, and for zlib its raw length's bounds.
static int check_stored(const uint8_t *file, uint64_t file_size, uint64_t offset, uint64_t length, stored_block *block,
                        char *error, size_t capacity) {
    if (length < TRAILER_SIZE || offset > file_size || length > file_size - offset) {
        fail(error, capacity, "block at %llu (%llu bytes) does not fit in the file", (unsigned long long)offset,
             (unsigned long long)length);
        return 0;
    }
    const uint8_t *p = file + offset;
    size_t count = (size_t)length - TRAILER_SIZE;
    uint8_t type = p[count];
    uint32_t stored = load32(p + count + 1);
    uint32_t computed = crc(p, count + 1);
    if (stored != computed) {
        fail(error, capacity, "block at %llu: crc32 0x%08x, the trailer says 0x%08x", (unsigned long long)offset, computed,
             stored);
        return 0;
    }
    block->contents = p;
    block->contents_length = count;
    block->type = type;
    if (type == 0) {
        block->raw_length = count;
    } else if (type == 1) {
        if (count < 4) {
            fail(error, capacity, "zlib block at %llu has no raw length", (unsigned long long)offset);
            return 0;
        }
        uint64_t raw = load32(p);
        if (raw < 1 || raw > MAX_INFLATED || raw > (uint64_t)1032 * (count - 4)) {
            fail(error, capacity, "zlib block at %llu: raw length %llu out of bounds", (unsigned long long)offset,
                 (unsigned long long)raw);
            return 0;
        }
        block->raw_length = raw;
    } else {
        fail(error, capacity, "block at %llu: type %u", (unsigned long long)offset, (unsigned)type);
        return 0;
    }
    return 1;
}

/// The raw contents of a checked stored block into `out` (raw_length bytes).
static int decode_stored(const stored_block *block, uint8_t *out, uint64_t offset, char *error, size_t capacity) {
    if (block->type == 0) {
        if (block->contents_length > 0) memcpy(out, block->contents, block->contents_length);
        return 1;
    }
    uLongf produced = (uLongf)block->raw_length;
    uLong consumed = (uLong)(block->contents_length - 4);
    int status = uncompress2(out, &produced, block->contents + 4, &consumed);
    if (status != Z_OK || produced != block->raw_length || consumed != block->contents_length - 4) {
        fail(error, capacity, "zlib block at %llu does not inflate to its %llu bytes (zlib status %d)",
             (unsigned long long)offset, (unsigned long long)block->raw_length, status);
        return 0;
    }
    return 1;
}

// ---- Checked walk of block contents --------------------------------------------------------

/// The previous key of the walk, kept across blocks so that keys are checked ascending over the
/// whole table.
typedef struct key_state {
    uint8_t bytes[MAX_KEY + 1];
    uint32_t length;
    int present;
} key_state;

/// A checked walk over one block's entries.
typedef struct walker {
    const uint8_t *contents;
    uint32_t entries_end;
    uint32_t restart_count;
    uint32_t next_restart;
    uint32_t offset;
    uint32_t interval_end;
    /// The previous entry's key, replaced by each entry's.
    key_state *key;
    const uint8_t *value;
    uint32_t value_length;
} walker;

static int walker_start(walker *w, const uint8_t *contents, size_t length, key_state *key, const char *what,
                        uint64_t where, char *error, size_t capacity) {
    if (length < 4 || length > UINT32_MAX) {
        fail(error, capacity, "%s at %llu: %zu bytes cannot hold a restart count", what, (unsigned long long)where, length);
        return 0;
    }
    uint32_t count = load32(contents + length - 4);
    if (count > (length - 4) / 4) {
        fail(error, capacity, "%s at %llu: %u restart points do not fit in %zu bytes", what, (unsigned long long)where,
             count, length);
        return 0;
    }
    w->contents = contents;
    w->entries_end = (uint32_t)(length - 4 - 4 * (size_t)count);
    w->restart_count = count;
    w->next_restart = 0;
    w->offset = 0;
    w->interval_end = 0;
    w->key = key;
    if (count == 0 && w->entries_end != 0) {
        fail(error, capacity, "%s at %llu: entries but no restart point", what, (unsigned long long)where);
        return 0;
    }
    const uint8_t *restarts = contents + w->entries_end;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t restart = load32(restarts + 4 * (size_t)i);
        if ((i == 0 && restart != 0) || (i > 0 && restart <= load32(restarts + 4 * (size_t)(i - 1))) ||
            restart >= w->entries_end) {
            fail(error, capacity, "%s at %llu: restart point %u at %u is out of order or past the entries", what,
                 (unsigned long long)where, i, restart);
            return 0;
        }
    }
    return 1;
}

/// The next entry: 1 (key in w->key, value at w->value), 0 at the end, -1 on a failed check.
static int walker_next(walker *w, const char *what, uint64_t where, char *error, size_t capacity) {
    if (w->offset == w->entries_end) {
        if (w->next_restart != w->restart_count) {
            fail(error, capacity, "%s at %llu: restart point %u is not at an entry", what, (unsigned long long)where,
                 w->next_restart);
            return -1;
        }
        return 0;
    }
    const uint8_t *restarts = w->contents + w->entries_end;
    int at_restart = 0;
    if (w->next_restart < w->restart_count) {
        uint32_t restart = load32(restarts + 4 * (size_t)w->next_restart);
        if (restart < w->offset) {
            fail(error, capacity, "%s at %llu: restart point %u is not at an entry", what, (unsigned long long)where,
                 w->next_restart);
            return -1;
        }
        if (restart == w->offset) {
            at_restart = 1;
            w->next_restart++;
            w->interval_end = w->next_restart < w->restart_count
                ? load32(restarts + 4 * (size_t)w->next_restart) : w->entries_end;
        }
    }
    const uint8_t *p = w->contents + w->offset;
    const uint8_t *end = w->contents + w->interval_end;
    uint64_t shared, unshared, value_length;
    size_t n1 = checked_varint(p, end, 5, &shared);
    size_t n2 = n1 ? checked_varint(p + n1, end, 5, &unshared) : 0;
    size_t n3 = n2 ? checked_varint(p + n1 + n2, end, 5, &value_length) : 0;
    if (n3 == 0) {
        fail(error, capacity, "%s at %llu: entry at %u has a bad varint", what, (unsigned long long)where, w->offset);
        return -1;
    }
    p += n1 + n2 + n3;
    key_state *key = w->key;
    if ((at_restart && shared != 0) || (!at_restart && shared > key->length) || shared + unshared < 1 ||
        shared + unshared > MAX_KEY) {
        fail(error, capacity, "%s at %llu: entry at %u shares %llu bytes, adds %llu", what, (unsigned long long)where,
             w->offset, (unsigned long long)shared, (unsigned long long)unshared);
        return -1;
    }
    if (unshared > (uint64_t)(end - p) || value_length > (uint64_t)(end - p) - unshared) {
        fail(error, capacity, "%s at %llu: entry at %u runs past its restart interval", what, (unsigned long long)where,
             w->offset);
        return -1;
    }
    // Strictly ascending: the new key shares `shared` bytes with the previous one, so compare the
    // rest (at a restart point, or a block's first entry, the whole key).
    if (key->present) {
        int order = compare_keys(p, (size_t)unshared, key->bytes + shared, key->length - (size_t)shared);
        if (order <= 0) {
            fail(error, capacity, "%s at %llu: the key of the entry at %u is not above the previous one", what,
                 (unsigned long long)where, w->offset);
            return -1;
        }
    }
    memcpy(key->bytes + shared, p, (size_t)unshared);
    key->length = (uint32_t)(shared + unshared);
    key->present = 1;
    w->value = p + unshared;
    w->value_length = (uint32_t)value_length;
    w->offset = (uint32_t)(w->value + value_length - w->contents);
    return 1;
}

/// Checks a data entry's value: kind, sequence, and what follows them.
static int check_data_value(const uint8_t *value, uint32_t length, uint64_t where, uint32_t entry, char *error,
                            size_t capacity) {
    if (length < 2 || value[0] < KIND_VALUE || value[0] > KIND_BLOB) {
        fail(error, capacity, "data block at %llu: entry %u has no valid kind", (unsigned long long)where, entry);
        return 0;
    }
    uint64_t sequence;
    size_t n = checked_varint(value + 1, value + length, 10, &sequence);
    if (n == 0 || sequence >= SEQUENCE_LIMIT) {
        fail(error, capacity, "data block at %llu: entry %u has a bad sequence", (unsigned long long)where, entry);
        return 0;
    }
    size_t rest = length - 1 - n;
    if ((value[0] == KIND_TOMBSTONE && rest != 0) || (value[0] == KIND_BLOB && rest != BLOB_REFERENCE_SIZE)) {
        fail(error, capacity, "data block at %llu: entry %u of kind %u is followed by %zu bytes",
             (unsigned long long)where, entry, (unsigned)value[0], rest);
        return 0;
    }
    return 1;
}

// ---- Open ----------------------------------------------------------------------------------

static uint8_t *read_file(const char *path, uint64_t *size, char *error, size_t capacity) {
    FILE *file = fopen(path, "rb");
    if (file == NULL) {
        fail(error, capacity, "cannot open %s", path);
        return NULL;
    }
    uint8_t *bytes = NULL;
    long length = -1;
    if (fseek(file, 0, SEEK_END) == 0) length = ftell(file);
    if (length < 0 || fseek(file, 0, SEEK_SET) != 0) {
        fail(error, capacity, "cannot find the size of %s", path);
    } else if ((bytes = malloc(length > 0 ? (size_t)length : 1)) == NULL) {
        fail(error, capacity, "cannot allocate %ld bytes for %s", length, path);
    } else if (fread(bytes, 1, (size_t)length, file) != (size_t)length) {
        fail(error, capacity, "cannot read %s", path);
        free(bytes);
        bytes = NULL;
    }
    fclose(file);
    *size = (uint64_t)(length > 0 ? length : 0);
    return bytes;
}

/// A block handle: a stored block's offset and length, trailer included.
typedef struct handle {
    uint64_t offset;
    uint64_t length;
} handle;

/// The key of restart point i of checked block contents, in place (its shared is 0). In an
/// index block, partition or the top-level index, every entry is a restart point: entry i's key.
static inline const uint8_t *restart_key(const uint8_t *contents, uint32_t entries_end, uint32_t i, uint32_t *length) {
    const uint8_t *p = contents + load32(contents + entries_end + 4 * (size_t)i);
    uint32_t shared, value_length;
    p = varint32(p, &shared);
    p = varint32(p, length);
    p = varint32(p, &value_length);
    return p;
}

/// The data blocks the index entries name, in file order.
typedef struct block_list {
    handle *handles;
    size_t count;
    size_t capacity;
} block_list;

static int block_list_add(block_list *list, handle h) {
    if (list->count == list->capacity) {
        size_t capacity = list->capacity ? 2 * list->capacity : 256;
        handle *handles = realloc(list->handles, capacity * sizeof *handles);
        if (handles == NULL) return 0;
        list->handles = handles;
        list->capacity = capacity;
    }
    list->handles[list->count++] = h;
    return 1;
}

/// A block handle (two checked varint64s) at p in [p, end): the bytes it takes, 0 when it does
/// not decode.
static size_t read_handle(const uint8_t *p, const uint8_t *end, handle *h) {
    size_t n1 = checked_varint(p, end, 10, &h->offset);
    size_t n2 = n1 ? checked_varint(p + n1, end, 10, &h->length) : 0;
    return n2 ? n1 + n2 : 0;
}

/// Checks the index block (version 4) or index partition (version 5) whose contents are
/// `contents`: every entry a restart point, a separator (ascending: `key` carries the previous
/// separator across the table) and a block handle, the handles tiling data_start ..< data_end
/// exactly; with `last`, at least one entry and the last separator equal to it. Adds the
/// handles to `list` and describes the block in `*out`.
static int check_index(const uint8_t *contents, size_t length, uint64_t where, const char *what, uint64_t data_start,
                       uint64_t data_end, const uint8_t *last, uint32_t last_length, key_state *key, block_list *list,
                       ctf_index *out, char *error, size_t capacity) {
    walker w;
    if (!walker_start(&w, contents, length, key, what, where, error, capacity)) return 0;
    size_t first = list->count;
    uint32_t entries = 0;
    uint64_t expected = data_start;
    for (int status; (status = walker_next(&w, what, where, error, capacity)) != 0;) {
        if (status < 0) return 0;
        handle h;
        if (read_handle(w.value, w.value + w.value_length, &h) != w.value_length) {
            fail(error, capacity, "%s at %llu: entry %u is not a block handle", what, (unsigned long long)where, entries);
            return 0;
        }
        if (entries == w.restart_count || h.offset != expected || h.length < TRAILER_SIZE || h.length > MAX_STORED ||
            h.length > data_end - h.offset) {
            fail(error, capacity, "%s at %llu: entry %u does not name the next data block before %llu", what,
                 (unsigned long long)where, entries, (unsigned long long)data_end);
            return 0;
        }
        expected = h.offset + h.length;
        if (!block_list_add(list, h)) {
            fail(error, capacity, "out of memory");
            return 0;
        }
        entries++;
    }
    if (entries != w.restart_count || expected != data_end) {
        fail(error, capacity, "%s at %llu: its %u entries are not all restart points or do not tile %llu ..< %llu", what,
             (unsigned long long)where, entries, (unsigned long long)data_start, (unsigned long long)data_end);
        return 0;
    }
    if (last != NULL && (entries == 0 || compare_keys(key->bytes, key->length, last, last_length) != 0)) {
        fail(error, capacity, "%s at %llu: its last separator is not the one the top-level index names for it", what,
             (unsigned long long)where);
        return 0;
    }
    *out = (ctf_index){contents, w.entries_end, w.restart_count, first};
    return 1;
}

/// Checks a filter block or partition: raw, its bits at least 64, its probe count 1 … 30. (Its
/// bits are not used here: every key looked up is present.)
static int check_filter(const stored_block *filter, uint64_t where, char *error, size_t capacity) {
    if (filter->type != 0 || filter->contents_length < MIN_FILTER_BYTES ||
        filter->contents[filter->contents_length - 1] < 1 ||
        filter->contents[filter->contents_length - 1] > MAX_FILTER_PROBES) {
        fail(error, capacity, "filter at %llu: not raw, or not 64 bits or more and 1 ... 30 probes",
             (unsigned long long)where);
        return 0;
    }
    return 1;
}

/// Version 4's metadata: the filter block (raw, checked against the footer's crc32) and the
/// index block (inflated into table->index_arena, checked against the footer's crc32, and
/// whole), its handles added to `list`.
static int load_v4(ctf_table *table, const uint8_t *file, uint64_t size, const uint8_t *footer, key_state *key,
                   block_list *list, const char *path, char *error, size_t capacity) {
    uint64_t filter_offset = load64(footer + 16), filter_length = load64(footer + 24);
    uint64_t index_offset = load64(footer + 32), index_length = load64(footer + 40);
    stored_block filter;
    if (!check_stored(file, size, filter_offset, filter_length, &filter, error, capacity)) return 0;
    if (!check_filter(&filter, filter_offset, error, capacity)) return 0;
    if (crc(filter.contents, filter.contents_length) != load32(footer + 48)) {
        fail(error, capacity, "%s: the filter block fails the footer's checksum", path);
        return 0;
    }
    stored_block index;
    if (!check_stored(file, size, index_offset, index_length, &index, error, capacity)) return 0;
    if ((table->index_arena = malloc((size_t)index.raw_length)) == NULL ||
        (table->indexes = malloc(sizeof *table->indexes)) == NULL) {
        fail(error, capacity, "out of memory");
        return 0;
    }
    if (!decode_stored(&index, table->index_arena, index_offset, error, capacity)) return 0;
    if (crc(table->index_arena, (size_t)index.raw_length) != load32(footer + 52)) {
        fail(error, capacity, "%s: the index block fails the footer's checksum", path);
        return 0;
    }
    key->present = 0;
    key->length = 0;
    if (!check_index(table->index_arena, (size_t)index.raw_length, index_offset, "index block", 0, filter_offset, NULL, 0,
                     key, list, &table->indexes[0], error, capacity)) {
        return 0;
    }
    table->index_count = 1;
    return 1;
}

/// A partition named by a top-level index entry.
typedef struct partition {
    handle filter;
    handle index;
    uint64_t data_start;
} partition;

/// Version 5's metadata: the top-level index (inflated into table->top, checked against the
/// footer's crc32 and count, and whole), every filter partition (raw, trailer, shape) and every
/// index partition (inflated into table->index_arena, checked whole against its run and its
/// top-level entry), their handles added to `list`.
static int load_v5(ctf_table *table, const uint8_t *file, uint64_t size, const uint8_t *footer, key_state *key,
                   block_list *list, const char *path, char *error, size_t capacity) {
    uint64_t data_end = load64(footer + 16), partitions_length = load64(footer + 24);
    uint64_t top_offset = load64(footer + 32), top_length = load64(footer + 40);
    uint32_t declared = load32(footer + 48);
    if (declared > partitions_length / (2 * TRAILER_SIZE) || (declared == 0) != (partitions_length == 0)) {
        fail(error, capacity, "%s: the footer declares %u partitions in %llu bytes", path, declared,
             (unsigned long long)partitions_length);
        return 0;
    }

    // The top-level index: an entry per partition, its key the partition's last separator, its
    // value the filter and index partitions' handles and the run's first data offset.
    stored_block top;
    if (!check_stored(file, size, top_offset, top_length, &top, error, capacity)) return 0;
    if ((table->top = malloc((size_t)top.raw_length)) == NULL) {
        fail(error, capacity, "out of memory");
        return 0;
    }
    if (!decode_stored(&top, table->top, top_offset, error, capacity)) return 0;
    if (crc(table->top, (size_t)top.raw_length) != load32(footer + 52)) {
        fail(error, capacity, "%s: the top-level index fails the footer's checksum", path);
        return 0;
    }
    walker w;
    key->present = 0;
    key->length = 0;
    if (!walker_start(&w, table->top, (size_t)top.raw_length, key, "top-level index", top_offset, error, capacity)) {
        return 0;
    }
    if (w.restart_count != declared) {
        fail(error, capacity, "%s: the top-level index has %u restart points, the footer declares %u partitions", path,
             w.restart_count, declared);
        return 0;
    }
    table->top_entries_end = w.entries_end;
    partition *partitions = malloc(sizeof *partitions * (declared ? declared : 1));
    if (partitions == NULL || (table->indexes = malloc(sizeof *table->indexes * (declared ? declared : 1))) == NULL) {
        free(partitions);
        fail(error, capacity, "out of memory");
        return 0;
    }
    int ok = 0;
    uint32_t count = 0;
    uint64_t expected = data_end;
    for (int status; (status = walker_next(&w, "top-level index", top_offset, error, capacity)) != 0;) {
        if (status < 0) goto done;
        partition part;
        const uint8_t *p = w.value, *end = w.value + w.value_length;
        size_t n1 = read_handle(p, end, &part.filter);
        size_t n2 = n1 ? read_handle(p + n1, end, &part.index) : 0;
        size_t n3 = n2 ? checked_varint(p + n1 + n2, end, 10, &part.data_start) : 0;
        if (n3 == 0 || n1 + n2 + n3 != w.value_length) {
            fail(error, capacity, "%s: top-level index entry %u is not two block handles and a data offset", path, count);
            goto done;
        }
        if (count == declared || part.filter.offset != expected || part.filter.length < TRAILER_SIZE ||
            part.filter.length > MAX_STORED || part.filter.length > top_offset - part.filter.offset ||
            part.index.offset != part.filter.offset + part.filter.length || part.index.length < TRAILER_SIZE ||
            part.index.length > MAX_STORED || part.index.length > top_offset - part.index.offset) {
            fail(error, capacity, "%s: top-level index entry %u does not name the next two partitions before %llu", path,
                 count, (unsigned long long)top_offset);
            goto done;
        }
        if ((count == 0 ? part.data_start != 0 : part.data_start <= partitions[count - 1].data_start) ||
            part.data_start >= data_end) {
            fail(error, capacity, "%s: top-level index entry %u starts its data blocks at %llu, out of order or past %llu",
                 path, count, (unsigned long long)part.data_start, (unsigned long long)data_end);
            goto done;
        }
        expected = part.index.offset + part.index.length;
        partitions[count++] = part;
    }
    if (count != declared || expected != top_offset || (count == 0 && data_end != 0)) {
        fail(error, capacity, "%s: the top-level index's %u entries are not all restart points or do not tile the "
             "partitions (or name no data blocks)", path, count);
        goto done;
    }

    // Filter partitions: trailer and shape. Index partitions: trailers, then each inflated into
    // one buffer and checked whole.
    uint64_t total = 0;
    stored_block *stored = malloc(sizeof *stored * (count ? count : 1));
    if (stored == NULL) {
        fail(error, capacity, "out of memory");
        goto done;
    }
    for (uint32_t i = 0; i < count; i++) {
        stored_block filter;
        if (!check_stored(file, size, partitions[i].filter.offset, partitions[i].filter.length, &filter, error, capacity) ||
            !check_filter(&filter, partitions[i].filter.offset, error, capacity) ||
            !check_stored(file, size, partitions[i].index.offset, partitions[i].index.length, &stored[i], error,
                          capacity)) {
            free(stored);
            goto done;
        }
        total += stored[i].raw_length;
    }
    if ((table->index_arena = malloc(total ? (size_t)total : 1)) == NULL) {
        free(stored);
        fail(error, capacity, "out of memory");
        goto done;
    }
    uint8_t *place = table->index_arena;
    key->present = 0;
    key->length = 0;
    for (uint32_t i = 0; i < count; i++) {
        uint64_t run_end = i + 1 < count ? partitions[i + 1].data_start : data_end;
        uint32_t last_length;
        const uint8_t *last = restart_key(table->top, table->top_entries_end, i, &last_length);
        if (!decode_stored(&stored[i], place, partitions[i].index.offset, error, capacity) ||
            !check_index(place, (size_t)stored[i].raw_length, partitions[i].index.offset, "index partition",
                         partitions[i].data_start, run_end, last, last_length, key, list, &table->indexes[i], error,
                         capacity)) {
            free(stored);
            goto done;
        }
        place += stored[i].raw_length;
    }
    free(stored);
    table->index_count = count;
    ok = 1;

done:
    free(partitions);
    return ok;
}

ctf_table *ctf_open(const char *path, char *error, size_t capacity) {
    uint64_t size = 0;
    uint8_t *file = read_file(path, &size, error, capacity);
    if (file == NULL) return NULL;
    ctf_table *table = calloc(1, sizeof *table);
    key_state *key = malloc(sizeof *key);
    block_list list = {NULL, 0, 0};
    stored_block *stored = NULL;
    int ok = 0;
    if (table == NULL || key == NULL) {
        fail(error, capacity, "out of memory");
        goto done;
    }
    table->file_bytes = size;

    // Footer: magic, version 4 or 5, flags and reserved 0, crc32, handles tiling the file.
    if (size < FOOTER_SIZE) {
        fail(error, capacity, "%s: %llu bytes, shorter than the footer", path, (unsigned long long)size);
        goto done;
    }
    const uint8_t *footer = file + size - FOOTER_SIZE;
    if (crc(footer, 56) != load32(footer + 56)) {
        fail(error, capacity, "%s: footer crc32 mismatch", path);
        goto done;
    }
    if (memcmp(footer, "WALSTABL", 8) != 0 || (footer[8] != 4 && footer[8] != 5) || footer[9] != 0 ||
        load32(footer + 8) >> 16 != 0 || load32(footer + 12) != 0) {
        fail(error, capacity, "%s: not a table footer of version 4 or 5", path);
        goto done;
    }
    table->version = footer[8];
    // Version 4: filter block, index block. Version 5: the partitions (none only for a table of
    // no entries), the top-level index.
    uint64_t metadata_offset = load64(footer + 16), metadata_length = load64(footer + 24);
    uint64_t index_offset = load64(footer + 32), index_length = load64(footer + 40);
    uint64_t body = size - FOOTER_SIZE;
    if (metadata_offset > body || metadata_length > body - metadata_offset ||
        index_offset != metadata_offset + metadata_length || index_length != body - index_offset) {
        fail(error, capacity, "%s: the footer's handles do not tile the file", path);
        goto done;
    }

    if (table->version == 4 ? !load_v4(table, file, size, footer, key, &list, path, error, capacity)
                            : !load_v5(table, file, size, footer, key, &list, path, error, capacity)) {
        goto done;
    }

    // Data blocks: trailers first, then every block inflated into one buffer.
    size_t blocks = list.count;
    table->block_count = blocks;
    if ((stored = malloc(sizeof *stored * (blocks ? blocks : 1))) == NULL) {
        fail(error, capacity, "out of memory");
        goto done;
    }
    uint64_t total = 0;
    for (size_t i = 0; i < blocks; i++) {
        if (!check_stored(file, size, list.handles[i].offset, list.handles[i].length, &stored[i], error, capacity)) {
            goto done;
        }
        total += stored[i].raw_length;
        if (stored[i].type == 1) table->zlib_blocks++;
    }
    table->inflated_bytes = total;
    if ((table->arena = malloc(total ? (size_t)total : 1)) == NULL ||
        (table->blocks = malloc(sizeof *table->blocks * (blocks ? blocks : 1))) == NULL) {
        fail(error, capacity, "out of memory");
        goto done;
    }
    uint8_t *place = table->arena;
    key->present = 0;
    key->length = 0;
    const ctf_index *index = table->indexes;
    for (size_t i = 0; i < blocks; i++) {
        // The index (partition) naming block i, and block i's entry in it.
        while (i >= index->first_block + index->count) index++;
        uint32_t entry = (uint32_t)(i - index->first_block);
        uint64_t where = list.handles[i].offset;
        walker w;
        if (!decode_stored(&stored[i], place, where, error, capacity)) goto done;
        if (!walker_start(&w, place, (size_t)stored[i].raw_length, key, "data block", where, error, capacity)) goto done;
        table->blocks[i] = (ctf_block){place, w.entries_end, w.restart_count};
        if (w.restart_count == 0) {
            fail(error, capacity, "%s: data block %zu is empty", path, i);
            goto done;
        }
        uint32_t in_block = 0;
        for (int status; (status = walker_next(&w, "data block", where, error, capacity)) != 0;) {
            if (status < 0) goto done;
            if (!check_data_value(w.value, w.value_length, where, in_block, error, capacity)) goto done;
            // A block's first key is above the previous block's separator.
            if (in_block == 0 && i > 0) {
                const ctf_index *before = entry > 0 ? index : index - 1;
                uint32_t length;
                const uint8_t *previous =
                    restart_key(before->data, before->entries_end, entry > 0 ? entry - 1 : before->count - 1, &length);
                if (compare_keys(key->bytes, key->length, previous, length) <= 0) {
                    fail(error, capacity, "%s: data block %zu starts at or below the separator before it", path, i);
                    goto done;
                }
            }
            in_block++;
        }
        // Its last key is at or below its separator.
        uint32_t length;
        const uint8_t *own = restart_key(index->data, index->entries_end, entry, &length);
        if (compare_keys(key->bytes, key->length, own, length) > 0) {
            fail(error, capacity, "%s: data block %zu ends above its separator", path, i);
            goto done;
        }
        table->entry_count += in_block;
        place += stored[i].raw_length;
    }
    ok = 1;

done:
    free(file);
    free(key);
    free(list.handles);
    free(stored);
    if (!ok) {
        ctf_close(table);
        return NULL;
    }
    return table;
}

void ctf_close(ctf_table *table) {
    if (table == NULL) return;
    free(table->arena);
    free(table->blocks);
    free(table->top);
    free(table->index_arena);
    free(table->indexes);
    free(table);
}

unsigned ctf_version(const ctf_table *table) { return table->version; }
size_t ctf_partition_count(const ctf_table *table) { return table->top != NULL ? table->index_count : 0; }

size_t ctf_block_count(const ctf_table *table) { return table->block_count; }
uint64_t ctf_entry_count(const ctf_table *table) { return table->entry_count; }
uint64_t ctf_file_bytes(const ctf_table *table) { return table->file_bytes; }
uint64_t ctf_inflated_bytes(const ctf_table *table) { return table->inflated_bytes; }
size_t ctf_zlib_block_count(const ctf_table *table) { return table->zlib_blocks; }

// ---- In-place decoding (the timed paths) ---------------------------------------------------

/// Decodes the entry at `p` into `key` (the previous entry's key), `entry` (key left alone):
/// returns the next entry's place.
static inline const uint8_t *decode_entry(const uint8_t *p, uint8_t *key, uint32_t *key_length, ctf_entry *entry) {
    uint32_t shared, unshared, value_length;
    p = varint32(p, &shared);
    p = varint32(p, &unshared);
    p = varint32(p, &value_length);
    memcpy(key + shared, p, unshared);
    *key_length = shared + unshared;
    p += unshared;
    const uint8_t *end = p + value_length;
    entry->kind = *p;
    const uint8_t *value = varint64(p + 1, &entry->sequence);
    entry->value = value;
    entry->value_length = (uint32_t)(end - value);
    return end;
}

void ctf_scan(const ctf_table *table, ctf_scan_totals *totals) {
    uint8_t key[MAX_KEY + 1];
    uint64_t entries = 0, key_bytes = 0, value_bytes = 0, sequences = 0, check = 0;
    for (size_t b = 0; b < table->block_count; b++) {
        const ctf_block block = table->blocks[b];
        const uint8_t *p = block.data;
        const uint8_t *end = block.data + block.entries_end;
        uint32_t key_length = 0;
        while (p < end) {
            ctf_entry entry;
            p = decode_entry(p, key, &key_length, &entry);
            entries++;
            key_bytes += key_length;
            value_bytes += entry.value_length;
            sequences += entry.sequence;
            check += (uint64_t)(key[key_length - 1] ^ entry.kind);
        }
    }
    totals->entries = entries;
    totals->key_bytes = key_bytes;
    totals->value_bytes = value_bytes;
    totals->sequence_sum = sequences;
    totals->key_check = check;
}

/// The entry of `key`, `buffer` holding at least MAX_KEY + 1 bytes for the walk's keys.
static inline int find(const ctf_table *table, const uint8_t *key, size_t key_length, ctf_entry *entry,
                       uint8_t *buffer) {
    // Version 5: the first top-level separator (a partition's last) at or above the key names
    // the index partition; version 4 has one index block.
    const ctf_index *index = table->indexes;
    if (table->top != NULL) {
        uint32_t low = 0, high = table->index_count;
        while (low < high) {
            uint32_t middle = low + (high - low) / 2;
            uint32_t length;
            const uint8_t *candidate = restart_key(table->top, table->top_entries_end, middle, &length);
            if (compare_keys(candidate, length, key, key_length) < 0) {
                low = middle + 1;
            } else {
                high = middle;
            }
        }
        if (low == table->index_count) return 0;
        index += low;
    }
    // The first separator of that index at or above the key names the block.
    uint32_t low = 0, high = index->count;
    while (low < high) {
        uint32_t middle = low + (high - low) / 2;
        uint32_t length;
        const uint8_t *candidate = restart_key(index->data, index->entries_end, middle, &length);
        if (compare_keys(candidate, length, key, key_length) < 0) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    if (low == index->count) return 0;
    const ctf_block block = table->blocks[index->first_block + low];
    const uint8_t *restarts = block.data + block.entries_end;
    // The first restart point whose key is above the key; the interval before it may hold it.
    uint32_t left = 0, right = block.restart_count;
    while (left < right) {
        uint32_t middle = left + (right - left) / 2;
        const uint8_t *p = block.data + load32(restarts + 4 * (size_t)middle);
        uint32_t shared, unshared, value_length;
        p = varint32(p, &shared);
        p = varint32(p, &unshared);
        p = varint32(p, &value_length);
        if (compare_keys(p, unshared, key, key_length) <= 0) {
            left = middle + 1;
        } else {
            right = middle;
        }
    }
    if (left == 0) return 0;
    const uint8_t *p = block.data + load32(restarts + 4 * (size_t)(left - 1));
    const uint8_t *end = left < block.restart_count ? block.data + load32(restarts + 4 * (size_t)left)
                                                    : block.data + block.entries_end;
    uint32_t length = 0;
    while (p < end) {
        p = decode_entry(p, buffer, &length, entry);
        int order = compare_keys(buffer, length, key, key_length);
        if (order == 0) {
            entry->key = NULL;
            entry->key_length = length;
            return 1;
        }
        if (order > 0) return 0;
    }
    return 0;
}

int ctf_get(const ctf_table *table, const uint8_t *key, size_t key_length, ctf_entry *entry) {
    uint8_t buffer[MAX_KEY + 1];
    return find(table, key, key_length, entry, buffer);
}

uint64_t ctf_lookup_all(const ctf_table *table, const uint8_t *keys, const uint64_t *offsets, size_t count,
                        uint64_t *value_bytes) {
    uint8_t buffer[MAX_KEY + 1];
    uint64_t found = 0, bytes = 0;
    for (size_t i = 0; i < count; i++) {
        ctf_entry entry;
        if (find(table, keys + offsets[i], (size_t)(offsets[i + 1] - offsets[i]), &entry, buffer) &&
            entry.kind == KIND_VALUE) {
            found++;
            bytes += entry.value_length;
        }
    }
    *value_bytes = bytes;
    return found;
}

// ---- Cursor --------------------------------------------------------------------------------

ctf_cursor *ctf_cursor_open(const ctf_table *table) {
    ctf_cursor *cursor = malloc(sizeof *cursor);
    if (cursor == NULL) return NULL;
    cursor->table = table;
    cursor->block = 0;
    cursor->next = table->block_count > 0 ? table->blocks[0].data : NULL;
    return cursor;
}

int ctf_cursor_next(ctf_cursor *cursor, ctf_entry *entry) {
    const ctf_table *table = cursor->table;
    while (cursor->block < table->block_count &&
           cursor->next == table->blocks[cursor->block].data + table->blocks[cursor->block].entries_end) {
        cursor->block++;
        if (cursor->block < table->block_count) cursor->next = table->blocks[cursor->block].data;
    }
    if (cursor->block == table->block_count) return 0;
    uint32_t length;
    cursor->next = decode_entry(cursor->next, cursor->key, &length, entry);
    entry->key = cursor->key;
    entry->key_length = length;
    return 1;
}

void ctf_cursor_close(ctf_cursor *cursor) { free(cursor); }

uint32_t ctf_crc32(uint32_t start, const void *bytes, size_t count) {
    // zlib's crc32 of a NULL buffer is its initial value, not `start`.
    if (count == 0) return start;
    return (uint32_t)crc32_z(start, (const Bytef *)bytes, (z_size_t)count);
}
