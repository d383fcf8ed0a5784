/*
 * utf8.c - UTF-8 validation and repair (util/utf8.h).
 */
#include "util/utf8.h"

#include <string.h>

size_t mfu__utf8_seq(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t len;
    unsigned v, min;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2;
        v = c & 0x1f;
        min = 0x80;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        v = c & 0x0f;
        min = 0x800;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        v = c & 0x07;
        min = 0x10000;
    } else {
        return 0; /* a continuation byte, 0xc0/0xc1 (always overlong) or 0xf5..0xff */
    }
    if (n < len)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        v = (v << 6) | (s[i] & 0x3f);
    }
    if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
        return 0; /* overlong, past U+10FFFF, a surrogate */
    *cp = v;
    return len;
}

bool mfu__utf8_valid(const char *s, size_t n, size_t *bad)
{
    const unsigned char *p = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        if (p[i] < 0x80) { /* the usual case: ASCII */
            i++;
            continue;
        }
        unsigned cp;
        size_t k = mfu__utf8_seq(p + i, n - i, &cp);
        if (k == 0) {
            if (bad)
                *bad = i;
            return false;
        }
        i += k;
    }
    return true;
}

size_t mfu__utf8_repair(const char *src, char *dst, size_t n)
{
    static const char fffd[] = "\xef\xbf\xbd";
    const unsigned char *p = (const unsigned char *)src;
    size_t len = strlen(src), o = 0, replaced = 0;
    for (size_t i = 0; i < len;) {
        unsigned cp;
        size_t k = mfu__utf8_seq(p + i, len - i, &cp);
        const char *from = k ? src + i : fffd;
        size_t w = k ? k : 3;
        if (o + w + 1 > n)
            break; /* cut at a character boundary */
        memcpy(dst + o, from, w);
        o += w;
        i += k ? k : 1;
        replaced += k == 0;
    }
    dst[o] = '\0';
    return replaced;
}
