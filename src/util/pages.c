/*
 * pages.c - reserved mappings for long arrays (util/pages.h).
 */
#if defined(__linux__)
#define _GNU_SOURCE /* MAP_NORESERVE, MADV_HUGEPAGE */
#include <sys/mman.h>
#endif
#include <stdint.h>
#include <stdlib.h>

#include "util/pages.h"

#define HUGE ((size_t)2 << 20)

void *mfu__pages_reserve(size_t bytes, size_t *len)
{
    *len = 0;
#if defined(__linux__) && defined(MAP_NORESERVE)
    if (bytes == 0 || bytes > SIZE_MAX / 2 - 2 * HUGE)
        return NULL;
    size_t want = (bytes + HUGE - 1) / HUGE * HUGE;
    /* one 2 MiB more, so that an aligned range of `want` lies inside; the ends are given back */
    char *raw = mmap(NULL, want + HUGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *p = (char *)(((uintptr_t)raw + HUGE - 1) & ~(uintptr_t)(HUGE - 1));
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    if (raw + want + HUGE > p + want)
        munmap(p + want, (size_t)(raw + want + HUGE - (p + want)));
#if defined(MADV_HUGEPAGE)
    (void)madvise(p, want, MADV_HUGEPAGE); /* a hint: without it the pages are small */
#endif
    *len = want;
    return p;
#else
    (void)bytes;
    return NULL;
#endif
}

void mfu__pages_free(void *p, size_t len)
{
    if (!p)
        return;
#if defined(__linux__) && defined(MAP_NORESERVE)
    if (len) {
        munmap(p, len);
        return;
    }
#endif
    free(p);
}
