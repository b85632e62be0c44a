#ifndef RILL_CPREFETCH_H
#define RILL_CPREFETCH_H

/// Asks the processor to bring the cache line at `address` into its caches ahead of a read,
/// without waiting for it. A hint only: an address that is not mapped does not fault.
static inline void rill_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
