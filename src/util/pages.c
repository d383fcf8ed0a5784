/*
 * pages.c - reserved mappings for long arrays, and columns of one value (util/pages.h).
 *
 * A column of one value (mfu__const_map): most figures of a long run, and several columns of a
 * run's log, are one number in every row (tokens per step, sequence length, devices, peak,
 * FLOPs per token, the useful share; the learning rate of a constant schedule), and the NaN
 * every absent column reads. Filled
 * row by row, each is a column of fresh pages that the kernel zeroes before it is written: at
 * 10 million rows 80 MB a column, and the zeroing was the largest cost of a first series
 * request of the server. Mapped, the column is MAP_BYTES of one file (a memfd) mapped private
 * at every MAP_BYTES of the column: its rows read the value, the memory is MAP_BYTES however
 * long the run, and a write copies the page it touches only (a row whose figure differs costs
 * its page, not a column). Linux only; elsewhere, or when the kernel refuses, the caller fills
 * a block of its own.
 */
#if defined(__linux__)
#define _GNU_SOURCE /* MAP_NORESERVE, MADV_HUGEPAGE, memfd_create */
#include <sys/mman.h>
#include <unistd.h>
#endif
#include <stdint.h>
#include <stdlib.h>

#include "util/pages.h"

void *mfu__pages_reserve(size_t bytes, size_t *len)
{
    *len = 0;
#if defined(__linux__) && defined(MAP_NORESERVE)
    if (bytes == 0 || bytes > SIZE_MAX / 2 - 2 * MFU__HUGE_PAGE)
        return NULL;
    size_t want = (bytes + MFU__HUGE_PAGE - 1) / MFU__HUGE_PAGE * MFU__HUGE_PAGE;
    /* one 2 MiB more, so that an aligned range of `want` lies inside; the ends are given back */
    char *raw = mmap(NULL, want + MFU__HUGE_PAGE, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    char *p = (char *)(((uintptr_t)raw + MFU__HUGE_PAGE - 1) & ~(uintptr_t)(MFU__HUGE_PAGE - 1));
    if (p > raw)
        munmap(raw, (size_t)(p - raw));
    if (raw + want + MFU__HUGE_PAGE > p + want)
        munmap(p + want, (size_t)(raw + want + MFU__HUGE_PAGE - (p + want)));
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

/* The block mapped again and again: 2 MiB, so that a column of 10 million rows is 39 mappings. */
#define MAP_BYTES ((size_t)2 << 20)

size_t mfu__const_map_min = (size_t)8 << 20;

double *mfu__const_map(double x, size_t n, size_t *len)
{
    *len = 0;
#if defined(__linux__) && defined(MFD_CLOEXEC)
    if (n < 1 || n > SIZE_MAX / sizeof x - MAP_BYTES || n * sizeof x < mfu__const_map_min)
        return NULL;
    size_t bytes = (n * sizeof x + MAP_BYTES - 1) / MAP_BYTES * MAP_BYTES;
    int fd = memfd_create("mfu-figures", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    char *base = MAP_FAILED;
    if (ftruncate(fd, (off_t)MAP_BYTES) == 0) {
        double *one = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (one != MAP_FAILED) {
            for (size_t i = 0; i < MAP_BYTES / sizeof x; i++)
                one[i] = x;
            munmap(one, MAP_BYTES);
            /* the range first, then the file over every block of it */
            base = mmap(NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        }
    }
    for (size_t at = 0; base != MAP_FAILED && at < bytes; at += MAP_BYTES)
        if (mmap(base + at, MAP_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd, 0) ==
            MAP_FAILED) {
            munmap(base, bytes);
            base = MAP_FAILED;
        }
    close(fd); /* the mappings keep the file */
    if (base == MAP_FAILED)
        return NULL;
    *len = bytes;
    return (double *)(void *)base;
#else
    (void)x;
    (void)n;
    return NULL;
#endif
}
