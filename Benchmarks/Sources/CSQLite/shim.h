#ifndef WALSTORE_BENCH_CSQLITE_SHIM_H
#define WALSTORE_BENCH_CSQLITE_SHIM_H
#include <sqlite3.h>
#endif
