/*
 * device_internal.h - helpers shared by the files of src/device (not part of the public API).
 */
#ifndef MFU_DEVICE_INTERNAL_H
#define MFU_DEVICE_INTERNAL_H

#include <stddef.h>

/* Longest piece of user input quoted in an error message. */
#define MFU__DEVICE_QUOTE_MAX 48

/* Copy s into dst (size n > 4) for quoting in a one-line message: at most
 * min(n - 4, MFU__DEVICE_QUOTE_MAX) bytes, bytes outside printable ASCII replaced by '?',
 * "..." appended when cut. Always NUL-terminated. */
void mfu__device_quote(char *dst, size_t n, const char *s);

#endif
