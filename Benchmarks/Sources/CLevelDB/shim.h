#ifndef WALSTORE_BENCH_CLEVELDB_SHIM_H
#define WALSTORE_BENCH_CLEVELDB_SHIM_H
#include <leveldb/c.h>
#endif
