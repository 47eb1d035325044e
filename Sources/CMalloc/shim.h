#ifndef WALSTORE_CMALLOC_SHIM_H
#define WALSTORE_CMALLOC_SHIM_H
// glibc's <malloc.h> (Debian's libc6-dev), for mallinfo2() in walstore-example's memory figure.
#include <malloc.h>
#endif
