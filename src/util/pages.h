/*
 * util/pages.h - long arrays in mappings of their own, reserved once for the most rows they
 * may hold, so that they grow without moving: no copy, and no pages zeroed for a copy.
 *
 * A run's columns grew by doubling, each growth a new block that the kernel zeroes and the old
 * rows are copied into: at 10 million rows that zeroed 2.7 times the final columns (the sizes
 * 10M + 8.4M + 4.2M + ... rows) and was half the CPU time of a JSON-lines ingest on the VM of
 * docs/performance.md. A reservation is address space only (MAP_NORESERVE); a page costs
 * memory when first written, in 2 MiB pages where the kernel gives transparent huge pages.
 */
#ifndef MFU_UTIL_PAGES_H
#define MFU_UTIL_PAGES_H

#include <stddef.h>

/* The size of a transparent huge page (x86-64, arm64 with 4 KiB pages): the alignment and the
 * unit of the reservations, and of the run's 2 MiB-aligned blocks (run.c). */
#define MFU__HUGE_PAGE ((size_t)2 << 20)

/* Reserve a zeroed, 2 MiB-aligned mapping of at least `bytes` (rounded up to 2 MiB), marked for
 * transparent huge pages. *len gets its length, for mfu__pages_free. NULL (and *len 0) when
 * bytes is 0, when the platform has no such mappings (not Linux) or when the kernel refuses:
 * the caller allocates with malloc instead. */
void *mfu__pages_reserve(size_t bytes, size_t *len);

/* Free an array: the mapping of len bytes at p when len > 0 (from mfu__pages_reserve, or any
 * other mapping of that length, as mfu__const_map's), else p from malloc (free(p)). NULL p
 * does nothing. */
void mfu__pages_free(void *p, size_t len);

/* A column of n doubles whose every row reads x, made of one 2 MiB block of x (a memfd) mapped
 * private again and again (Linux, n x 8 bytes at least mfu__const_map_min): its memory is one
 * block however long the column, and a write copies the page it touches only (each page read
 * counts as resident, though). *len gets the bytes mapped (free with mfu__pages_free(p, *len),
 * never free()). NULL (and *len 0) when none is made: a short column, another platform, the
 * kernel refused; the caller allocates. */
double *mfu__const_map(double x, size_t n, size_t *len);
/* The fewest bytes of a column mfu__const_map maps (8 MiB: a million rows); the tests lower
 * it. */
extern size_t mfu__const_map_min;

#endif
