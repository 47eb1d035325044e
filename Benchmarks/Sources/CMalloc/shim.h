#ifndef WALSTORE_BENCH_CMALLOC_SHIM_H
#define WALSTORE_BENCH_CMALLOC_SHIM_H
// glibc's <malloc.h> (Debian's libc6-dev): mallinfo2() and malloc_trim() for the index-memory
// workload's child process.
#include <malloc.h>
#endif
