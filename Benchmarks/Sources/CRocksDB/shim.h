#ifndef WALSTORE_BENCH_CROCKSDB_SHIM_H
#define WALSTORE_BENCH_CROCKSDB_SHIM_H
#include <rocksdb/c.h>
#endif
