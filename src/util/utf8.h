/*
 * util/utf8.h - UTF-8 checks for text that leaves the process as JSON or enters the store
 * (docs/internals/util.md). Valid means RFC 3629: no overlong form, no surrogate, nothing past
 * U+10FFFF, no stray continuation byte, no sequence cut short. NUL bytes are the caller's
 * concern (these take lengths).
 */
#ifndef MFU_UTIL_UTF8_H
#define MFU_UTIL_UTF8_H

#include <stdbool.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (n > 0 bytes left) and its code point in *cp, or 0
 * when the bytes there are not one. */
size_t mfu__utf8_seq(const unsigned char *s, size_t n, unsigned *cp);

/* Whether s[0..n) is valid UTF-8. When it is not and bad is not NULL, *bad gets the offset of
 * the first byte that starts no valid sequence. */
bool mfu__utf8_valid(const char *s, size_t n, size_t *bad);

/* Copy the NUL-terminated src into dst (size n > 0) as valid UTF-8: every byte that starts no
 * valid sequence becomes U+FFFD (3 bytes), and the copy is cut at a character boundary to fit.
 * Always NUL-terminates. Returns how many bytes were replaced (0: src was valid and fitted
 * unchanged, unless it had to be cut). src and dst must not overlap. */
size_t mfu__utf8_repair(const char *src, char *dst, size_t n);

#endif
