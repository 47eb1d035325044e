// The tests' allocation counter: the test executable defines malloc and its siblings, which
// count the calling thread's calls while it is counting and forward every call to glibc's own
// allocator (__libc_malloc and friends, which glibc exports for exactly this), so the process's
// heap is unchanged. A definition in the executable takes precedence over libc's for every
// shared library too (the Swift runtime's allocations included).
//
// Sanitizer builds bring an allocator of their own that must see every call: there the
// definitions are left out and walstore_allocations_available() returns 0.
#include "CAllocationCounter.h"

#include <errno.h>
#include <stddef.h>

#if defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define WALSTORE_NO_COUNTER 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__) || !defined(__GLIBC__)
#define WALSTORE_NO_COUNTER 1
#endif
// <stddef.h> does not define __GLIBC__; <errno.h> (glibc's features.h) does.

#ifndef WALSTORE_NO_COUNTER

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

static _Thread_local int counting;
static _Thread_local long allocations;

void *malloc(size_t size) {
    if (counting) allocations += 1;
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    if (counting) allocations += 1;
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (counting) allocations += 1;
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    if (counting) allocations += 1;
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    if (counting) allocations += 1;
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    if (counting) allocations += 1;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

int walstore_allocations_available(void) { return 1; }

void walstore_allocations_start(void) {
    allocations = 0;
    counting = 1;
}

long walstore_allocations_stop(void) {
    counting = 0;
    return allocations;
}

#else

int walstore_allocations_available(void) { return 0; }
void walstore_allocations_start(void) {}
long walstore_allocations_stop(void) { return 0; }

#endif
