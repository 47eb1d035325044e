#ifndef WALSTORE_BENCH_CLMDB_SHIM_H
#define WALSTORE_BENCH_CLMDB_SHIM_H
#include <lmdb.h>
#endif
