#ifndef WALSTORE_ALLOCATION_COUNTER_H
#define WALSTORE_ALLOCATION_COUNTER_H
// Counts the heap allocations (malloc, calloc, realloc, aligned allocations) made by the calling
// thread between walstore_allocations_start() and walstore_allocations_stop(): the tests'
// allocation counter, for the engine's promise that a steady-state scan or cached point read
// allocates nothing per entry. glibc only; see counter.c.

// 1 when this build counts (glibc, no sanitizer replacing the allocator), else 0: a test that
// needs the counter checks this first.
int walstore_allocations_available(void);
// Starts counting the calling thread's allocations from zero.
void walstore_allocations_start(void);
// Stops counting and returns the calling thread's allocations since the start.
long walstore_allocations_stop(void);

#endif
