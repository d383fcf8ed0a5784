/*
 * test_ingest_fast2.c - the second round of ingest fast paths (docs/internals/ingest.md
 * "Performance") against the code they stand in for, on large seeded corpora, as
 * test_ingest_fast.c does for the first round:
 *   - the reader's line scan (the first control byte, SSE2 and portable) against a byte loop,
 *     the lines against a splitter written from the reader's contract, and its "clean" flag;
 *   - the in-place cleaner against the copying one, on every line the reader hands out;
 *   - the branch-free timestamp reader against the digit loops it replaced;
 *   - mfu__dec_scan_value against the general number reader;
 *   - JSON line shapes (jflat.h) against mfu__jflat_parse, and a generic-jsonl session that
 *     reads lines by shape against each line read alone (jansson's path);
 *   - Megatron step lines read by shape and by the fast iteration head against the helpers;
 *   - a file read with the in-place cleaner and the capacity hint against the same bytes fed
 *     from memory (the copying paths), and mfu_run_reserve.
 * Each comparison also asserts that its fast path was taken often, so that a fast path that
 * always declined would fail.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run/step.h"
#include "ingest/fast.h"
#include "ingest/format.h"
#include "ingest/internal.h"
#include "ingest/jflat.h"
#include "ingest_test.h"
#include "ref_megatron.h"
#include "sameness.h"

static const char *pick(rng *r, const char *const *list, size_t n)
{
    return list[below(r, (int)n)];
}

#define PICK(r, list) pick((r), (list), MFU__ARRAY_LEN(list))

static bool ctrl_ref(unsigned char c)
{
    return (c < 0x20 && c != '\t') || c == 0x7f;
}

/* ---- the first control byte ----------------------------------------------------------- */

static size_t ctrl_find_ref(const char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ctrl_ref((unsigned char)p[i]))
            return i;
    return n;
}

static void ctrl_find_matches_byte_loop(void **state)
{
    (void)state;
    /* bytes around every boundary: below and at 0x20, tab, 0x7f, the high half (a signed
     * compare would take 0x80..0xff for control bytes) */
    static const unsigned char alphabet[] = {'a',  ' ',  '\t', 0x1b, 0x7f, 0x80, 0xff, 0x1f,
                                             0x20, 0x7e, 0x00, 0x0a, 0x0d, 0xc2, 0x9f, 0xa0};
    rng r = {4242};
    char buf[160];
    long found = 0;
    for (int i = 0; i < 300000; i++) {
        size_t n = (size_t)below(&r, 130);
        int dense = below(&r, 4); /* 0: many special bytes; else one in ~60 */
        for (size_t k = 0; k < n; k++)
            buf[k] = (char)((dense ? below(&r, 60) : below(&r, 2))
                                ? ' ' + below(&r, 95)
                                : alphabet[below(&r, (int)sizeof alphabet)]);
        size_t off = (size_t)below(&r, 16);
        if (off > n)
            off = n;
        size_t want = ctrl_find_ref(buf + off, n - off);
        size_t fast = mfu__ctrl_find(buf + off, n - off);
        size_t port = mfu__ctrl_find_portable(buf + off, n - off);
        if (fast != want || port != want)
            fail_msg("case %d: first control byte at %zu, SSE2 path %zu, portable %zu", i, want,
                     fast, port);
        found += want < n - off;
    }
    assert_true(found > 100000);
    /* 22 bytes: high bytes and a tab are no control bytes, the \n at 21 is */
    assert_int_equal(mfu__ctrl_find("\x80\x81\xfe\xff\t\xc2\xb5s 0123456789ab\n", 22), 21);
    assert_int_equal(mfu__ctrl_find_portable("\x80\x81\xfe\xff\t\xc2\xb5s 0123456789ab\n", 22), 21);
    assert_int_equal(mfu__ctrl_find("0123456789abcdef0123456789abcdef\x7f", 33), 32);
    assert_int_equal(mfu__ctrl_find("", 0), 0);
}

/* ---- reader: the clean flag, lines written in place ---------------------------------------- */

typedef struct ref_line {
    size_t off, len; /* in the input */
    long lineno;
    bool too_long;
} ref_line;

/* The reader's contract (internal.h): pieces between \n and \r, empty ones dropped, a piece
 * over max_line reported as too long, line numbers counting \n. */
static size_t ref_split(const char *in, size_t n, size_t max_line, ref_line *out)
{
    size_t k = 0, start = 0;
    long lineno = 1;
    for (size_t i = 0; i <= n; i++) {
        if (i < n && in[i] != '\n' && in[i] != '\r')
            continue;
        if (i > start) {
            out[k].off = start;
            out[k].len = i - start > max_line ? 0 : i - start;
            out[k].too_long = i - start > max_line;
            out[k].lineno = lineno;
            k++;
        }
        if (i < n && in[i] == '\n')
            lineno++;
        start = i + 1;
    }
    return k;
}

/* A log of about n bytes: lines of printable text with now and then a tab, an ANSI escape,
 * a DEL, a NUL-free control byte or UTF-8; \n, \r and \r\n endings, blank and long lines. */
static size_t random_log(rng *r, char *in, size_t n)
{
    static const char *const odd[] = {"\t",        "\x1b[31m",     "\x1b[0m",      "\x7f", "\x01",
                                      "\xc2\xb5s", "\x1b]0;t\x07", "\xe2\x96\x88", "\x1f", "\x08"};
    size_t i = 0;
    while (i + 1 < n) {
        size_t len = below(r, 20) == 0 ? (size_t)below(r, 900) : (size_t)below(r, 160);
        for (size_t j = 0; j < len && i + 8 < n; j++) {
            if (below(r, 40) == 0) {
                const char *o = PICK(r, odd);
                size_t k = strlen(o);
                memcpy(in + i, o, k);
                i += k;
            } else {
                in[i++] = (char)(' ' + below(r, 95));
            }
        }
        int sep = below(r, 12);
        in[i++] = sep < 9 ? '\n' : '\r';
        if (sep == 11 && i < n)
            in[i++] = '\n';
    }
    return i;
}

/* Read in through r; every line is checked against the contract, its clean flag against
 * its bytes, and then cleaned in place when the reader allows it, as the session does (so a
 * write into one line that hurt a later one would show). Returns the lines flagged clean. */
static long read_all(mfu__reader *r, const char *in, size_t n, const ref_line *want, size_t nwant,
                     bool file, long *inplace)
{
    size_t k = 0;
    long clean = 0;
    char copy[1001], buf[1001];
    for (;;) {
        mfu__rline rl;
        bool eof = false;
        mfu_error e;
        assert_int_equal(mfu__reader_next(r, &rl, &eof, &e), MFU_OK);
        if (eof)
            break;
        if (k >= nwant)
            fail_msg("reader gave more than %zu lines", nwant);
        assert_int_equal(rl.too_long, want[k].too_long);
        assert_int_equal(rl.lineno, want[k].lineno);
        assert_int_equal(rl.len, want[k].len);
        if (rl.len && memcmp(rl.text, in + want[k].off, rl.len) != 0)
            fail_msg("line %zu (physical %ld) differs", k, want[k].lineno);
        if (rl.clean) {
            clean++;
            assert_int_equal(ctrl_find_ref(rl.text, rl.len), rl.len);
        }
        /* the caller's memory is never offered for writing; the reader's own buffers are */
        bool in_caller = rl.text >= in && rl.text < in + n;
        if (!file && in_caller)
            assert_null(rl.wtext);
        else
            assert_ptr_equal(rl.wtext, rl.text);
        if (rl.clean && rl.wtext && !rl.too_long) {
            memcpy(copy, rl.text, rl.len);
            mfu__line a, b;
            mfu__clean_line(copy, rl.len, rl.lineno, buf, &b);
            mfu__clean_line_inplace(rl.wtext, rl.len, rl.lineno, &a);
            if (a.len != b.len || memcmp(a.text, b.text, a.len + 1) != 0 ||
                a.raw_len != b.raw_len || memcmp(a.raw, b.raw, a.raw_len + 1) != 0 ||
                a.rank != b.rank || a.lineno != b.lineno ||
                !same_bits(a.prefix_time_s, b.prefix_time_s))
                fail_msg("line %zu cleaned in place: '%s', copied: '%s'", k, a.text, b.text);
            (*inplace)++;
        }
        k++;
    }
    assert_int_equal(k, nwant);
    return clean;
}

static void reader_flags_clean_lines(void **state)
{
    (void)state;
    rng r = {777};
    size_t cap = 4 * MFU__READER_CHUNK + 1000;
    char *in = malloc(cap), *orig = malloc(cap);
    ref_line *want = malloc(cap * sizeof *want);
    assert_non_null(in);
    assert_non_null(orig);
    assert_non_null(want);
    long clean = 0, ctrl_free = 0, inplace = 0;
    for (int round = 0; round < 8; round++) {
        size_t n = random_log(&r, in, round < 2 ? 2000 : cap);
        size_t max_line = 600;
        size_t nwant = ref_split(in, n, max_line, want);
        for (size_t k = 0; k < nwant; k++)
            ctrl_free +=
                !want[k].too_long && ctrl_find_ref(in + want[k].off, want[k].len) == want[k].len;
        memcpy(orig, in, n);
        mfu__reader *mr = mfu__reader_mem(in, n, max_line);
        assert_non_null(mr);
        clean += read_all(mr, in, n, want, nwant, false, &inplace);
        mfu__reader_free(mr);
        assert_memory_equal(in, orig, n); /* the memory source is untouched */
        FILE *f = fmemopen(orig, n, "rb");
        assert_non_null(f);
        mfu__reader *fr = mfu__reader_file(f, max_line);
        assert_non_null(fr);
        clean += read_all(fr, in, n, want, nwant, true, &inplace);
        mfu__reader_free(fr);
        fclose(f);
    }
    /* the flag is set for nearly every line without control bytes (not for those that span
     * two blocks), from both sources */
    assert_true(clean * 10 > ctrl_free * 2 * 9);
    assert_true(inplace > 1000);
    free(in);
    free(orig);
    free(want);
}

/* ---- the cleaner in place ------------------------------------------------------------------ */

static const char *const clean_pieces[] = {"[rank3]:",
                                           "3: ",
                                           "stdout: ",
                                           "rank0[73][MainThread]: ",
                                           "[titan] ",
                                           "[2024-01-02 03:04:05,678] ",
                                           "[2024-09-03 16:38:39]",
                                           "2023-03-22 09:30:39 ",
                                           " - root - INFO - ",
                                           " | INFO | root | ",
                                           "[INFO] [file.py:12:f] ",
                                           "INFO:torchtune.utils:",
                                           "I0811 21:54:55.531340  514 file.py:226] ",
                                           "> ",
                                           "  ",
                                           "\t",
                                           " ",
                                           "iteration 10/ 100 |",
                                           "{\"step\": 1}",
                                           "[Rank 0] step=40",
                                           "\xc2\xb5s",
                                           "rank",
                                           "[",
                                           "0",
                                           "99999"};

static void cleaner_in_place_matches_copy(void **state)
{
    (void)state;
    rng r = {1618};
    char text[700], work[701], b1[701];
    long stripped = 0;
    for (int i = 0; i < 100000; i++) {
        size_t n = 0;
        for (int p = below(&r, 6); p > 0; p--) {
            const char *piece = PICK(&r, clean_pieces);
            size_t k = strlen(piece);
            if (n + k >= 600)
                break;
            memcpy(text + n, piece, k);
            n += k;
        }
        for (int t = below(&r, 40); t > 0; t--)
            text[n++] = (char)(' ' + below(&r, 95));
        for (int t = below(&r, 3); t > 0; t--)
            text[n++] = below(&r, 2) ? ' ' : '\t'; /* trailing blanks are cut in place */
        mfu__line a, b;
        mfu__clean_line(text, n, i, b1, &b);
        memcpy(work, text, n);
        work[n] = 'X'; /* the separator's place: the cleaner writes its NUL there */
        mfu__clean_line_inplace(work, n, i, &a);
        if (a.len != b.len || memcmp(a.text, b.text, a.len + 1) != 0 || a.raw_len != b.raw_len ||
            memcmp(a.raw, b.raw, a.raw_len + 1) != 0 || a.rank != b.rank || a.lineno != b.lineno ||
            !same_bits(a.prefix_time_s, b.prefix_time_s))
            fail_msg("cleaning '%.*s' in place: '%s', copied: '%s'", (int)n, text, a.text, b.text);
        assert_true(a.raw == work && a.text >= work && a.text <= work + n);
        stripped += a.text != a.raw;
    }
    assert_true(stripped > 30000);
}

/* ---- timestamps ---------------------------------------------------------------------------- */

/* mfu__datetime_scan as it was before (digit loops, the seconds summed in doubles). */
static bool ref_digits(const char *p, size_t n, int *out)
{
    int v = 0;
    for (size_t i = 0; i < n; i++) {
        if ((unsigned)(p[i] - '0') >= 10)
            return false;
        v = v * 10 + (p[i] - '0');
    }
    *out = v;
    return true;
}

static long ref_days_from_civil(int y, int m, int d)
{
    y -= m <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

static bool ref_datetime_scan(mfu__span s, double *unix_s, size_t *used)
{
    if (s.n < 19)
        return false;
    const char *p = s.p;
    int y, mo, d, h, mi, se;
    if (!ref_digits(p, 4, &y) || p[4] != '-' || !ref_digits(p + 5, 2, &mo) || p[7] != '-' ||
        !ref_digits(p + 8, 2, &d) || (p[10] != ' ' && p[10] != 'T') || !ref_digits(p + 11, 2, &h) ||
        p[13] != ':' || !ref_digits(p + 14, 2, &mi) || p[16] != ':' || !ref_digits(p + 17, 2, &se))
        return false;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
        return false;
    size_t k = 19;
    double frac = 0.0, scale = 0.1;
    if (k < s.n && (p[k] == '.' || p[k] == ',') && k + 1 < s.n && (unsigned)(p[k + 1] - '0') < 10) {
        k++;
        while (k < s.n && (unsigned)(p[k] - '0') < 10) {
            frac += (p[k] - '0') * scale;
            scale /= 10;
            k++;
        }
    }
    if (k < s.n && p[k] == 'Z')
        k++;
    double t = (double)ref_days_from_civil(y, mo, d) * 86400.0 + h * 3600.0 + mi * 60.0 + se + frac;
    *unix_s = t;
    *used = k;
    return true;
}

static void timestamps_match_digit_loops(void **state)
{
    (void)state;
    rng r = {1970};
    static const char noise[] = {'0', '9', '/', ':', '-', ' ', 'T', 'a', '.', ',', 'Z', '\0'};
    char buf[48];
    long valid = 0;
    for (int i = 0; i < 300000; i++) {
        /* mostly valid fields (years before 1970 too), sometimes out of range */
        int y = below(&r, 3000), mo = 1 + below(&r, 12), d = 1 + below(&r, 31), h = below(&r, 24),
            mi = below(&r, 60), se = below(&r, 61);
        if (below(&r, 10) == 0) {
            mo = below(&r, 100);
            d = below(&r, 100);
            h = below(&r, 100);
        }
        size_t n = (size_t)snprintf(buf, sizeof buf, "%04d-%02d-%02d%c%02d:%02d:%02d", y, mo, d,
                                    below(&r, 4) ? ' ' : 'T', h, mi, se);
        if (below(&r, 8) == 0) /* a wrong byte anywhere */
            buf[below(&r, (int)n)] = noise[below(&r, (int)sizeof noise - 1)];
        if (below(&r, 3) == 0) { /* a fraction, a zone */
            buf[n++] = below(&r, 2) ? '.' : ',';
            for (int k = below(&r, 7); k > 0; k--)
                buf[n++] = (char)('0' + below(&r, 10));
        }
        if (below(&r, 5) == 0)
            buf[n++] = 'Z';
        if (below(&r, 20) == 0)
            n = (size_t)below(&r, (int)n + 1); /* cut short */
        buf[n] = '\0';
        mfu__span s = {buf, n};
        double a = 0, b = 0;
        size_t ua = 0, ub = 0;
        bool got = mfu__datetime_scan(s, &a, &ua), want = ref_datetime_scan(s, &b, &ub);
        if (got != want || (want && (!same_bits(a, b) || ua != ub)))
            fail_msg("'%s': %d %.17g %zu, before %d %.17g %zu", buf, got, a, ua, want, b, ub);
        valid += want;
    }
    assert_true(valid > 100000);
}

/* ---- numbers: the value alone ------------------------------------------------------------ */

/* mfu__dec_scan_value reads what mfu__dec_scan reads, to the same value, without converting
 * the decimal itself when only its shifted value is kept; and both what the general reader
 * reads. */

static void random_decimal(rng *r, char *buf, size_t n)
{
    size_t k = 0;
    int sign = below(r, 4);
    if (sign == 1)
        buf[k++] = '-';
    else if (sign == 2)
        buf[k++] = '+';
    for (int z = below(r, 4) == 0 ? below(r, 25) : 0; z > 0; z--)
        buf[k++] = '0'; /* leading zeros, many of them sometimes */
    int id = below(r, 4) == 0 ? below(r, 26) : below(r, 8);
    int fd = below(r, 3) == 0 ? -1 : (below(r, 4) == 0 ? below(r, 26) : below(r, 8));
    if (id == 0 && fd <= 0)
        id = 1;
    for (int i = 0; i < id; i++)
        buf[k++] = (char)('0' + below(r, 10));
    if (fd >= 0) {
        buf[k++] = '.';
        for (int i = 0, z = below(r, 3) ? 0 : below(r, 25); i < fd + z; i++)
            buf[k++] = (char)('0' + (i < z ? 0 : below(r, 10)));
    }
    if (below(r, 3) == 0) {
        buf[k++] = below(r, 2) ? 'e' : 'E';
        int e = below(r, 4) ? below(r, 61) - 30 : below(r, 801) - 400;
        k += (size_t)snprintf(buf + k, n - k, "%+d", e);
    }
    buf[k] = '\0';
}

static void dec_scan_value_matches_general_reader(void **state)
{
    (void)state;
    rng r = {31415};
    char buf[160], text[200];
    static const int shifts[] = {0, 0, -3, 12, -9, 9, -2, 3, 15, -15, 300};
    long accepted = 0;
    for (int i = 0; i < 150000; i++) {
        random_decimal(&r, buf, sizeof buf);
        int shift = shifts[below(&r, (int)MFU__ARRAY_LEN(shifts))];
        snprintf(text, sizeof text, "%s |x", buf);
        const char *end = text + strlen(text);
        double v = 0, v2 = 0, pr = 0;
        const char *after = mfu__dec_scan_value(text, end, shift, &v);
        const char *after2 = mfu__dec_scan(text, end, shift, &v2, &pr);
        if (after != after2 || (after && !same_bits(v, v2)))
            fail_msg("'%s' shift %d: dec_scan %s %.17g, the value alone %s %.17g", buf, shift,
                     after2 ? "reads" : "declines", v2, after ? "reads" : "declines", v);
        if (!after)
            continue;
        accepted++;
        if (after != text + strlen(buf))
            fail_msg("'%s': stopped at '%s'", buf, after);
        mfu__num n;
        if (!mfu__num_parse_shift(mfu__span_of(buf), shift, &n) || !same_bits(n.value, v))
            fail_msg("'%s' shift %d: %.17g, general reader %.17g", buf, shift, v, n.value);
    }
    assert_true(accepted > 60000);
    /* the exactness test it makes instead of converting the decimal: the same answer */
    for (int i = 0; i < 300000; i++) {
        uint64_t m = next(&r) >> below(&r, 64);
        int e = below(&r, 100) - 50;
        double x;
        assert_int_equal(mfu__dec_exact(m, e), mfu__dec_to_double(m, e, false, &x));
    }
}

/* ---- decimal -> double beyond Clinger: Eisel-Lemire ---------------------------------------- */

/* Little-endian 32-bit limbs, enough for T x 5^128 (< 2^426). */
enum { BN = 16 };
typedef struct bn {
    uint32_t l[BN];
} bn;

static void bn_mul_small(bn *a, uint32_t k)
{
    uint64_t carry = 0;
    for (int i = 0; i < BN; i++) {
        uint64_t x = (uint64_t)a->l[i] * k + carry;
        a->l[i] = (uint32_t)x;
        carry = x >> 32;
    }
    assert_true(carry == 0);
}

static bn bn_pow5(int q)
{
    bn a;
    memset(&a, 0, sizeof a);
    a.l[0] = 1;
    for (int i = 0; i < q; i++)
        bn_mul_small(&a, 5);
    return a;
}

/* a x (T = hi:lo) */
static bn bn_mul_t(const bn *a, uint64_t hi, uint64_t lo)
{
    uint32_t t[4] = {(uint32_t)lo, (uint32_t)(lo >> 32), (uint32_t)hi, (uint32_t)(hi >> 32)};
    bn r;
    memset(&r, 0, sizeof r);
    for (int j = 0; j < 4; j++) {
        uint64_t carry = 0;
        for (int i = 0; i + j < BN; i++) {
            uint64_t x = (uint64_t)a->l[i] * t[j] + r.l[i + j] + carry;
            r.l[i + j] = (uint32_t)x;
            carry = x >> 32;
        }
    }
    return r;
}

static bn bn_shl(const bn *a, int k) /* a x 2^k, k >= 0 */
{
    bn r;
    memset(&r, 0, sizeof r);
    for (int i = 0; i < BN; i++)
        for (int b = 0; b < 32; b++)
            if (a->l[i] >> b & 1) {
                int at = i * 32 + b + k;
                assert_true(at < BN * 32);
                r.l[at / 32] |= (uint32_t)1 << (at % 32);
            }
    return r;
}

static int bn_cmp(const bn *a, const bn *b)
{
    for (int i = BN; i-- > 0;)
        if (a->l[i] != b->l[i])
            return a->l[i] < b->l[i] ? -1 : 1;
    return 0;
}

static bn bn_add(const bn *a, const bn *b)
{
    bn r;
    uint64_t carry = 0;
    for (int i = 0; i < BN; i++) {
        uint64_t x = (uint64_t)a->l[i] + b->l[i] + carry;
        r.l[i] = (uint32_t)x;
        carry = x >> 32;
    }
    return r;
}

/* Every entry of pow5.c: T has its top bit set and T x 2^f <= 5^q < (T + 1) x 2^f, exactly
 * (for q < 0: T x 5^-q <= 2^-f < (T + 1) x 5^-q), in integers. */
static void pow5_table_is_exact(void **state)
{
    (void)state;
    bn one;
    memset(&one, 0, sizeof one);
    one.l[0] = 1;
    for (int q = MFU__POW5_QMIN; q <= MFU__POW5_QMAX; q++) {
        const mfu__pow5 *t = &mfu__pow5_128[q - MFU__POW5_QMIN];
        assert_true(t->hi >> 63);
        bn lo, hi;
        if (q >= 0) { /* T x 2^f <= 5^q < (T + 1) x 2^f, shifted to integers */
            bn p = bn_pow5(q), tb = bn_mul_t(&one, t->hi, t->lo), t1 = bn_add(&tb, &one);
            if (t->f >= 0) {
                lo = bn_shl(&tb, t->f);
                hi = bn_shl(&t1, t->f);
            } else {
                lo = tb;
                hi = t1;
                p = bn_shl(&p, -t->f);
            }
            if (bn_cmp(&lo, &p) > 0 || bn_cmp(&p, &hi) >= 0)
                fail_msg("5^%d: the table's entry is not its 128-bit floor", q);
            if (q <= 55) /* exact there, as fast.c assumes */
                assert_int_equal(bn_cmp(&lo, &p), 0);
        } else {
            bn d = bn_pow5(-q), k = bn_shl(&one, -t->f);
            lo = bn_mul_t(&d, t->hi, t->lo);
            hi = bn_add(&lo, &d);
            if (bn_cmp(&lo, &k) > 0 || bn_cmp(&k, &hi) >= 0)
                fail_msg("5^%d: the table's entry is not its 128-bit floor", q);
            assert_true(bn_cmp(&lo, &k) != 0); /* inexact, as fast.c assumes */
        }
    }
}

static bool strtod_of(uint64_t m, int e, bool neg, double *out)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%s%llue%d", neg ? "-" : "", (unsigned long long)m, e);
    errno = 0;
    *out = strtod(buf, NULL);
    return errno != ERANGE;
}

static void check_wide(uint64_t m, int e, bool neg, long *taken)
{
    double got, want;
    if (!mfu__dec_to_double_wide(m, e, neg, &got))
        return;
    (*taken)++;
    if (!strtod_of(m, e, neg, &want) || !same_bits(got, want))
        fail_msg("%s%llue%d: %.17g, strtod %.17g", neg ? "-" : "", (unsigned long long)m, e, got,
                 want);
}

/* mfu__dec_to_double_wide gives strtod's double whenever it answers, and answers nearly
 * always for the mantissas of 16-19 digits it is for. */
static void wide_decimals_match_strtod(void **state)
{
    (void)state;
    rng r = {0xE15E1};
    long taken = 0, long_taken = 0, long_tried = 0;
    for (int i = 0; i < 400000; i++) {
        uint64_t m = next(&r) >> below(&r, 64);
        int e = below(&r, 3) ? below(&r, 60) - 40 : below(&r, 300) - 150;
        check_wide(m, e, below(&r, 2), &taken);
        /* Python's repr: 16-17 significant digits */
        uint64_t d = 1000000000000000ull + next(&r) % 99000000000000000ull;
        int ed = below(&r, 50) - 40;
        long before = taken;
        check_wide(d, ed, false, &taken);
        long_tried++;
        long_taken += taken - before;
    }
    /* midpoints and their neighbours in the exact range (ties to even), and the ends */
    static const uint64_t hard[] = {9007199254740993ull,
                                    9007199254740995ull,
                                    18014398509481986ull,
                                    18014398509481990ull,
                                    36028797018963972ull,
                                    18446744073709551615ull,
                                    18446744073709549568ull,
                                    18446744073709550592ull,
                                    9223372036854775807ull,
                                    9223372036854775808ull,
                                    1ull,
                                    10000000000000000000ull};
    for (size_t i = 0; i < MFU__ARRAY_LEN(hard); i++)
        for (int e = -30; e <= 30; e++) {
            check_wide(hard[i], e, false, &taken);
            check_wide(hard[i] - 1, e, true, &taken);
            check_wide(hard[i] + 1, e, false, &taken);
        }
    for (int e = 0; e <= 55; e++) /* 5^e x 2^k + 2^(k-1) patterns: m with its 54th bit set */
        for (int k = 0; k < 11; k++)
            check_wide(((uint64_t)1 << 63) + ((uint64_t)1 << k), e, false, &taken);
    /* exact quotients m / 10^k (m a multiple of 5^k): the product lands just below a rounding
     * boundary; midpoints among them ((2^53 + 1) x 5^k x 10^-k) tie to even */
    uint64_t p5 = 1;
    for (int k = 1; k <= 27; k++) {
        p5 *= 5;
        for (int j = 0; j < 200; j++) {
            uint64_t mult = 1 + next(&r) % (UINT64_MAX / p5);
            check_wide(mult * p5, -k, below(&r, 2), &taken);
        }
        static const uint64_t odd53[] = {9007199254740993ull, 9007199254740995ull,
                                         4503599627370497ull, 18014398509481985ull};
        for (size_t i = 0; i < MFU__ARRAY_LEN(odd53); i++)
            if (odd53[i] <= UINT64_MAX / p5) {
                long before = taken;
                check_wide(odd53[i] * p5, -k, false, &taken);
                assert_int_equal(taken, before + 1);
            }
    }
    double v;
    assert_false(mfu__dec_to_double_wide(0, -300, false, &v)); /* zero: strtod's business */
    assert_false(mfu__dec_to_double_wide(1, MFU__POW5_QMAX + 1, false, &v));
    assert_false(mfu__dec_to_double_wide(1, MFU__POW5_QMIN - 1, false, &v));
    assert_true(mfu__dec_to_double_wide(9007199254740993ull, 0, false, &v));
    assert_true(same_bits(v, 9007199254740992.0)); /* the tie goes to the even neighbour */
    assert_true(taken > 500000);
    assert_true(long_taken * 1000 > long_tried * 999); /* repr digits: nearly never declined */
}

/* ---- JSON shapes ----------------------------------------------------------------------------- */

static const char *const shape_keys[] = {"step", "loss",         "lr", "iter", "train.loss", "a b",
                                         "mfu",  "tokens_per_s", "x",  "dt",   "k\\u00e9"};
/* Values: valid JSON first (SHAPE_GOOD of them), then what jflat declines or jansson rejects. */
#define SHAPE_GOOD 26
static const char *const shape_values[] = {"0",
                                           "-0",
                                           "7",
                                           "-12",
                                           "10050",
                                           "1e5",
                                           "1E-5",
                                           "-0.0",
                                           "2.5",
                                           "3e-4",
                                           "0.0001234",
                                           "0.30000000000000004",
                                           "\"3e-4\"",
                                           "\"250 ms\"",
                                           "\"x\"",
                                           "true",
                                           "false",
                                           "null",
                                           "[1, 2.5]",
                                           "{\"loss\": 1.5}",
                                           "912.3",
                                           "2.134364",
                                           "71202000000",
                                           "-1.5e+300",
                                           "\"\"",
                                           "[]",
                                           "1234567890123456789",
                                           "1e400",
                                           "\"a\\nb\"",
                                           "123456789012345678901",
                                           "01",
                                           "1.",
                                           "NaN",
                                           "-",
                                           "\"\xc3\xa9\"",
                                           "[1,]",
                                           "{\"a\" 1}"};

/* A line of one of a few layouts (so that shapes repeat), values drawn at random. */
static void shape_line(rng *r, char *buf, size_t n, int layout)
{
    static const char *const ws[] = {"", " ", "  ", "\t"};
    rng lr = {0x1234u + (uint64_t)layout * 7919u}; /* the layout's keys and blanks */
    size_t k = 0;
    buf[k++] = '{';
    int members = 1 + below(&lr, 9);
    for (int i = 0; i < members; i++) {
        if (i)
            k += (size_t)snprintf(buf + k, n - k, "%s,%s", ws[below(&lr, 4)], ws[below(&lr, 4)]);
        /* the last key has an escape: jflat declines it, in a few layouts */
        const char *key = below(&lr, 20) ? shape_keys[below(&lr, 10)] : PICK(&lr, shape_keys);
        const char *val = below(r, 24) ? shape_values[below(r, SHAPE_GOOD)] : PICK(r, shape_values);
        const char *colon_ws = ws[below(&lr, 4)];
        k += (size_t)snprintf(buf + k, n - k, "\"%s\"%s:%s%s", key, colon_ws, ws[below(&lr, 4)],
                              val);
    }
    k += (size_t)snprintf(buf + k, n - k, "%s}%s", ws[below(&lr, 4)], ws[below(&lr, 2)]);
    if (below(r, 30) == 0 && k > 2) /* now and then a perturbed line */
        buf[below(r, (int)k)] = PICK(r, ws)[0] ? ' ' : ',';
    static const char *const tails[] = {" x", ",", "}", " ", "\t", "{\"a\": 1}", ", \"b\": 2}"};
    if (below(r, 30) == 0) { /* or one with more after its end */
        if (k > 1 && below(r, 2))
            k -= 1 + (buf[k - 1] == ' ' || buf[k - 1] == '\t');
        k += (size_t)snprintf(buf + k, n - k, "%s", PICK(r, tails));
    }
    buf[k] = '\0';
}

static void check_same_members(const mfu__jflat *a, const mfu__jflat *b, const char *line)
{
    if (a->n != b->n)
        fail_msg("%zu members by shape, %zu: %s", a->n, b->n, line);
    for (size_t i = 0; i < a->n; i++) {
        const mfu__jmember *x = &a->m[i], *y = &b->m[i];
        if (x->key != y->key || x->key_len != y->key_len || x->type != y->type ||
            x->val != y->val || x->val_end != y->val_end)
            fail_msg("member %zu differs: %s", i, line);
        if ((x->type == MFU__J_INT || x->type == MFU__J_REAL) &&
            (!same_bits(x->num, y->num) || (x->type == MFU__J_INT && x->ival != y->ival)))
            fail_msg("member %zu: %.17g by shape, %.17g: %s", i, x->num, y->num, line);
        if (x->type == MFU__J_STRING && (x->str != y->str || x->str_len != y->str_len))
            fail_msg("member %zu: string differs: %s", i, line);
    }
}

static void shapes_match_jflat(void **state)
{
    (void)state;
    rng r = {9001};
    static mfu__jshape shapes[3];
    memset(shapes, 0, sizeof shapes);
    int next_shape = 0;
    char line[2048];
    long by_shape = 0, declined = 0, learned = 0;
    for (int i = 0; i < 80000; i++) {
        shape_line(&r, line, sizeof line, below(&r, 4) ? below(&r, 3) : below(&r, 40));
        size_t len = strlen(line);
        mfu__jflat a, b;
        bool full = mfu__jflat_parse(line, len, &b);
        bool shaped = false;
        for (int k = 0; k < 3 && !shaped; k++) {
            if (!mfu__jflat_parse_shaped(line, len, &shapes[k], &a))
                continue;
            shaped = true;
            if (!full)
                fail_msg("read by shape what mfu__jflat_parse declines: %s", line);
            check_same_members(&a, &b, line);
        }
        by_shape += shaped;
        if (!shaped && full) {
            declined++;
            if (mfu__jshape_learn(&shapes[next_shape], line, len, &b)) {
                learned++;
                next_shape = (next_shape + 1) % 3;
                /* the line it was learned from reads by it */
                const mfu__jshape *sh = &shapes[(next_shape + 2) % 3];
                assert_true(mfu__jflat_parse_shaped(line, len, sh, &a));
                check_same_members(&a, &b, line);
            }
        }
    }
    assert_true(by_shape > 20000);
    assert_true(declined > 1000);
    assert_true(learned > 1000);
    /* a shape needs its NUL, and refuses an empty object */
    mfu__jflat o;
    mfu__jshape sh;
    assert_true(mfu__jflat_parse("{}", 2, &o));
    assert_false(mfu__jshape_learn(&sh, "{}", 2, &o));
    assert_false(mfu__jflat_parse_shaped("{}", 2, &sh, &o));
    assert_true(mfu__jflat_parse("{\"a\": 1}", 8, &o));
    assert_true(mfu__jshape_learn(&sh, "{\"a\": 1}", 8, &o));
    assert_true(mfu__jflat_parse_shaped("{\"a\": 2}", 8, &sh, &o));
    assert_false(mfu__jflat_parse_shaped("{\"a\": 2} ", 8, &sh, &o)); /* no NUL at len */
    assert_false(mfu__jflat_parse_shaped("{\"a\":  2}", 9, &sh, &o)); /* another blank */
    assert_false(mfu__jflat_parse_shaped("{\"b\": 2}", 8, &sh, &o));  /* another key */
    assert_false(mfu__jflat_parse_shaped("{\"a\": 02}", 9, &sh, &o)); /* invalid value */
}

/* One generic-jsonl session over text (forced format, opts as given). */
static mfu_run *jsonl_run(const char *text, size_t n, const char *const *map, size_t nmap)
{
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = "jsonl";
    o.map = map;
    o.nmap = nmap;
    o.max_line_bytes = 8192;
    mfu_run *run = NULL;
    mfu_error e;
    (void)ingest_buffer_opts(text, n, &o, &run, NULL, &e);
    return run;
}

static const char *const log_keys[] = {
    "loss", "train_loss",   "lr",     "learning_rate", "step_time_s", "tokens", "tokens_per_s",
    "mfu",  "memory_bytes", "time_s", "grad_norm",     "samples",     "rank",   "dt",
    "tps",  "train",        "x"};
static const char *const log_values[] = {"2.5",
                                         "3e-4",
                                         "0.30000000000000004",
                                         "17",
                                         "-1",
                                         "1e400",
                                         "\"250 ms\"",
                                         "\"13.99%\"",
                                         "\"N/A\"",
                                         "\"nan\"",
                                         "null",
                                         "true",
                                         "\"2024-01-01 00:00:10\"",
                                         "{\"loss\": 1.5}",
                                         "[1]",
                                         "1048576",
                                         "71202000000",
                                         "NaN",
                                         "\"x\"",
                                         "-0.0"};

/* A metrics log of n lines in a few layouts: each line's step is its index (so no row
 * merges), sometimes under another key, sometimes missing or not a number. */
static size_t metrics_log(rng *r, char *out, size_t cap, int lines, char (*texts)[512])
{
    size_t n = 0;
    for (int i = 0; i < lines; i++) {
        int layout = below(r, 5) ? below(r, 3) : below(r, 25);
        rng lr = {0xabcdu + (uint64_t)layout * 104729u};
        char line[512];
        size_t k = 0;
        const char *step_key = below(&lr, 4) ? "step" : below(&lr, 2) ? "iter" : "global_step";
        int step_pos = below(&lr, 3);
        int members = 2 + below(&lr, 7);
        k += (size_t)snprintf(line + k, sizeof line - k, "{");
        for (int m = 0; m < members; m++) {
            if (m)
                k += (size_t)snprintf(line + k, sizeof line - k, below(&lr, 2) ? ", " : ",");
            if (m == step_pos) {
                int sv = below(r, 40);
                if (sv == 0)
                    k += (size_t)snprintf(line + k, sizeof line - k, "\"%s\": \"%d\"", step_key,
                                          i + 1);
                else if (sv == 1)
                    k += (size_t)snprintf(line + k, sizeof line - k, "\"%s\": %d.5", step_key,
                                          i + 1);
                else
                    k += (size_t)snprintf(line + k, sizeof line - k, "\"%s\": %d", step_key, i + 1);
                continue;
            }
            const char *key = PICK(&lr, log_keys);
            const char *val = below(r, 6) ? PICK(&lr, log_values) : PICK(r, log_values);
            k += (size_t)snprintf(line + k, sizeof line - k, "\"%s\": %s", key, val);
        }
        k += (size_t)snprintf(line + k, sizeof line - k, "}");
        memcpy(texts[i], line, k + 1);
        memcpy(out + n, line, k);
        n += k;
        out[n++] = '\n';
        assert_true(n + 600 < cap);
    }
    return n;
}

/* A jsonl session reading lines by shape gives, line by line, the row each line gives when it
 * is read alone (the first object of a session takes jansson's path). */
static void jsonl_shapes_match_lines_read_alone(void **state)
{
    (void)state;
    enum { LINES = 2500 };
    char *log = malloc((size_t)LINES * 600);
    char(*texts)[512] = malloc((size_t)LINES * 512);
    assert_non_null(log);
    assert_non_null(texts);
    static const char *const map_dotted[] = {"loss=train.loss"};
    static const char *const map_factor[] = {"step_time_s=dt*0.001,tokens_per_s=tps,mfu=x*0.01"};
    static const char *const map_step[] = {"step=iter"};
    const struct {
        const char *const *map;
        size_t n;
    } maps[] = {{NULL, 0}, {map_dotted, 1}, {map_factor, 1}, {map_step, 1}};
    rng r = {27182};
    long rows = 0;
    for (size_t mi = 0; mi < MFU__ARRAY_LEN(maps); mi++) {
        size_t n = metrics_log(&r, log, (size_t)LINES * 600, LINES, texts);
        mfu_run *all = jsonl_run(log, n, maps[mi].map, maps[mi].n);
        assert_non_null(all);
        size_t row = 0;
        for (int i = 0; i < LINES; i++) {
            size_t len = strlen(texts[i]);
            mfu_run *one = jsonl_run(texts[i], len, maps[mi].map, maps[mi].n);
            size_t got = one ? mfu_run_count(one) : 0;
            if (got) {
                mfu_step x, y;
                assert_true(mfu_run_get(one, 0, &x));
                if (!mfu_run_get(all, row, &y))
                    fail_msg("map %zu line %d: no row in the session", mi, i + 1);
                if (!same_step(&x, &y))
                    fail_msg("map %zu line %d: the session's row differs: %s", mi, i + 1, texts[i]);
                row++;
            }
            mfu_run_free(one);
        }
        assert_int_equal(row, mfu_run_count(all));
        rows += (long)row;
        mfu_run_free(all);
    }
    assert_true(rows > 4000);
    free(log);
    free(texts);
}

/* ---- Megatron step lines by shape ------------------------------------------------------------ */

/* The step line as fmt_megatron.c read it before its fast paths: the head with
 * mfu__span_find and mfu__int_parse, the pieces with mfu__split_next on "|", mfu__kv on ": ",
 * the keys compared one by one, every value parsed. Returns false for a line the format does
 * not read as a step (no head) and sets *skip for one it skips (no elapsed time). The step is
 * normalised as mfu__emit does (no header in these logs). */
static bool ref_megatron_step(const char *text, mfu_step *out, bool *skip)
{
    *skip = false;
    mfu__span s = mfu__span_of(text);
    if (!mfu__span_starts(s, "iteration "))
        return false;
    mfu__span h = {s.p + 10, s.n - 10};
    long slash = mfu__span_find(h, "/"), bar = mfu__span_find(h, "|");
    int64_t iter;
    if (slash <= 0 || bar <= slash || !mfu__int_parse((mfu__span){h.p, (size_t)slash}, &iter))
        return false;
    mfu_step st;
    mfu_step_init(&st);
    st.step = iter;
    mfu__span rest = {h.p + bar + 1, h.n - (size_t)bar - 1};
    if (!ref_megatron_pieces(rest, &st)) {
        *skip = true;
        return false;
    }
    *out = st;
    return true;
}

/* Iteration heads: text before the number, the number's form, text after it. */
static const struct {
    const char *before, *after;
    int form; /* 0 plain, 1 %8d, 2 %03d, 3 with ",000", 4 with "e0", 5/6 with 14/10 more digits,
                 7 16 digits around 2^53 */
} meg_heads[] = {{"", "/ 1000000 |", 1}, {"", "/100|", 0},   {"   ", "/ 5 |", 0}, {"", " /10 |", 0},
                 {"\t", "/ 9 |", 0},     {"", "/ 7 |", 2},   {"", "/ 7 |", 3},    {"", "/ 7 |", 4},
                 {"", "/ 7", 0},         {"| ", "/ 7 |", 0}, {"", "", 0},         {"", "/ 3 |", 5},
                 {"", "/ 3 |", 6},       {"  ", "/ 3 |", 7}};

static void meg_head(char *buf, size_t n, size_t h, int iter)
{
    char num[48];
    switch (meg_heads[h].form) {
    case 1: snprintf(num, sizeof num, "%8d", iter); break;
    case 2: snprintf(num, sizeof num, "%03d", iter); break;
    case 3: snprintf(num, sizeof num, "%d,000", iter); break;
    case 4: snprintf(num, sizeof num, "%de0", iter); break;
    case 5: snprintf(num, sizeof num, "%d12345678901234", iter); break;
    case 6: snprintf(num, sizeof num, "%d1234567890", iter); break;
    case 7: snprintf(num, sizeof num, "90071992547409%02d", iter % 100); break;
    default: snprintf(num, sizeof num, "%d", iter); break;
    }
    snprintf(buf, n, "%s%s%s", meg_heads[h].before, num, meg_heads[h].after);
}

static const char *const meg_keys[] = {"elapsed time per iteration (ms)",
                                       "throughput per GPU (TFLOP/s/GPU)",
                                       "TFLOPs",
                                       "tokens per gpu per second (tgs)",
                                       "samples per second",
                                       "actual seqlen",
                                       "learning rate",
                                       "global batch size",
                                       "grad norm",
                                       "number of skipped iterations",
                                       "number of nan iterations",
                                       "lm loss",
                                       "mtp loss",
                                       "consumed samples",
                                       "loss scale",
                                       "lm  loss",
                                       "x"};
static const char *const meg_values[] = {"912.3",
                                         "1.062389E+01",
                                         "6.976744E-07",
                                         "0",
                                         "256",
                                         "-0",
                                         "nan",
                                         "inf",
                                         "N/A",
                                         "1,024",
                                         "12.5 ms",
                                         "abc",
                                         "1e400",
                                         "0.30000000000000004",
                                         "   7   ",
                                         "",
                                         "13.99%",
                                         "5.",
                                         "2x"};

/* A Megatron log: runs of lines of one layout (the keys, their order and blanks), values
 * drawn at random, a timestamp prefix, now and then a piece or a head that breaks the
 * layout. */
static size_t megatron_log(rng *r, char *out, size_t cap, int lines, char (*texts)[700])
{
    size_t n = 0;
    for (int i = 0; i < lines; i++) {
        int layout = below(r, 10) ? i / 20 % 60 : below(r, 60);
        rng lr = {0x5eedu + (uint64_t)layout * 65537u};
        char line[700];
        size_t k = (size_t)snprintf(line, sizeof line, "[2024-05-01 10:%02d:%02d] iteration ",
                                    i / 60 % 60, i % 60);
        char head[80];
        size_t h = below(&lr, 3) ? 0 : (size_t)below(&lr, (int)MFU__ARRAY_LEN(meg_heads));
        if (below(r, 8) == 0)
            h = (size_t)below(r, (int)MFU__ARRAY_LEN(meg_heads));
        meg_head(head, sizeof head, h, i + 1);
        k += (size_t)snprintf(line + k, sizeof line - k, "%s", head);
        int pieces = 1 + below(&lr, 13);
        for (int p = 0; p < pieces && k < 600; p++) {
            const char *key = PICK(&lr, meg_keys);
            static const char *const seps[] = {": ", ":  ", ":", " : ", ": :", ""};
            const char *sep = below(&lr, 6) ? seps[0] : PICK(&lr, seps);
            const char *lead = below(&lr, 8) ? " " : below(&lr, 2) ? "" : "   ";
            if (below(r, 80) == 0) { /* this line differs from its layout here */
                key = PICK(r, meg_keys);
                lead = "  ";
            }
            const char *val = below(&lr, 2) ? PICK(r, meg_values) : PICK(&lr, meg_values);
            k += (size_t)snprintf(line + k, sizeof line - k, "%s%s%s%s%s|", lead, key, sep,
                                  below(r, 3) ? " " : "", val);
        }
        if (below(&lr, 4)) /* usually the elapsed time too */
            k += (size_t)snprintf(line + k, sizeof line - k,
                                  " elapsed time per iteration (ms): %d.%d |", below(r, 100000),
                                  below(r, 10));
        if (below(r, 6) == 0 && k > 0)
            k--; /* no closing bar */
        memcpy(texts[i], line, k + 1);
        memcpy(out + n, line, k);
        n += k;
        out[n++] = '\n';
        assert_true(n + 700 < cap);
    }
    return n;
}

static void megatron_shapes_match_helpers(void **state)
{
    (void)state;
    enum { LINES = 6000 };
    rng r = {6174};
    char *log = malloc((size_t)LINES * 700);
    char(*texts)[700] = malloc((size_t)LINES * 700);
    assert_non_null(log);
    assert_non_null(texts);
    size_t n = megatron_log(&r, log, (size_t)LINES * 700, LINES, texts);
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = "megatron";
    mfu_run *run = NULL;
    mfu_ingest_stats stats;
    mfu_error e;
    assert_int_equal(ingest_buffer_opts(log, n, &o, &run, &stats, &e), MFU_OK);
    size_t row = 0;
    long skips = 0;
    for (int i = 0; i < LINES; i++) {
        mfu__line ln;
        char clean[701];
        mfu__clean_line(texts[i], strlen(texts[i]), i + 1, clean, &ln);
        mfu_step want, got;
        bool skip;
        if (!ref_megatron_step(ln.text, &want, &skip)) {
            skips += skip;
            continue;
        }
        want.time_s = ln.prefix_time_s; /* as mfu__emit fills it */
        if (mfu__step_plausible(&want, &want, NULL) != MFU_OK) {
            skips++; /* a value no measurement has: mfu_run_append refuses it */
            continue;
        }
        if (!mfu_run_get(run, row, &got))
            fail_msg("line %d: no row", i + 1);
        if (!same_step(&got, &want))
            fail_msg("line %d: the row differs from the helpers': %s", i + 1, texts[i]);
        row++;
    }
    assert_int_equal(stats.merged, 0); /* every step number differs: a row is a line */
    assert_int_equal(row, mfu_run_count(run));
    assert_int_equal(skips, stats.skipped);
    assert_true(row > LINES / 2);
    mfu_run_free(run);
    free(log);
    free(texts);
}

/* ---- a file (in place, capacity hint) against the same bytes from memory -------------------- */

static void check_same_session(const char *data, size_t n, const char *format)
{
    char path[512];
    snprintf(path, sizeof path, "%s/mfu-fast2-XXXXXX",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(data, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = format;
    mfu_run *a = NULL, *b = NULL;
    mfu_ingest_stats sa, sb;
    mfu_error e;
    assert_int_equal(mfu_ingest_path(path, &o, &a, &sa, &e), MFU_OK);
    assert_int_equal(ingest_buffer_opts(data, n, &o, &b, &sb, &e), MFU_OK);
    unlink(path);
    assert_int_equal(mfu_run_count(a), mfu_run_count(b));
    for (size_t i = 0; i < mfu_run_count(a); i++) {
        mfu_step x, y;
        assert_true(mfu_run_get(a, i, &x));
        assert_true(mfu_run_get(b, i, &y));
        if (!same_step(&x, &y))
            fail_msg("%s: row %zu differs between the file and memory", format ? format : "auto",
                     i);
    }
    const mfu_run_meta *ma = mfu_run_meta_get(a), *mb = mfu_run_meta_get(b);
    assert_string_equal(ma->format, mb->format);
    assert_string_equal(ma->convention, mb->convention);
    assert_int_equal(ma->seq_len, mb->seq_len);
    assert_int_equal(ma->global_batch, mb->global_batch);
    assert_string_equal(sa.format, sb.format);
    assert_int_equal(sa.lines, sb.lines);
    assert_int_equal(sa.used, sb.used);
    assert_int_equal(sa.ignored, sb.ignored);
    assert_int_equal(sa.skipped, sb.skipped);
    assert_int_equal(sa.too_long, sb.too_long);
    assert_int_equal(sa.merged, sb.merged);
    assert_int_equal(sa.steps, sb.steps);
    assert_int_equal(sa.truncated_last_line, sb.truncated_last_line);
    assert_int_equal(sa.peak_line_bytes, sb.peak_line_bytes);
    assert_true(mfu_run_count(a) > 1000);
    mfu_run_free(a);
    mfu_run_free(b);
}

static void file_matches_memory(void **state)
{
    (void)state;
    enum { LINES = 9000 };
    rng r = {1123};
    size_t cap = (size_t)LINES * 1400 + (2u << 20);
    char *log = malloc(cap), *body = malloc((size_t)LINES * 700);
    char(*texts)[700] = malloc((size_t)LINES * 700);
    assert_non_null(log);
    assert_non_null(body);
    assert_non_null(texts);
    /* Megatron: a header, then step lines; the first ones between long noise lines (so the
     * capacity estimated from them falls short), some colored, some with CRLF, a line longer
     * than a read block, and a last line without its newline */
    size_t n = 0;
    n += (size_t)snprintf(log + n, cap - n,
                          "------------------------ arguments ------------------------\n"
                          "  seq_length ...................................... 4096\n"
                          "  global_batch_size ............................... 256\n"
                          "-------------------- end of arguments ---------------------\n");
    (void)megatron_log(&r, body, (size_t)LINES * 700, LINES, texts); /* the lines in texts */
    for (int i = 0; i < LINES; i++) {
        if (i < 1500) {
            memset(log + n, 'z', 400);
            n += 400;
            log[n++] = '\n';
        }
        if (i % 97 == 0)
            n += (size_t)snprintf(log + n, cap - n, "\x1b[32m");
        size_t k = strlen(texts[i]);
        memcpy(log + n, texts[i], k);
        n += k;
        if (i % 89 == 0)
            log[n++] = '\r';
        if (i == 4000) {
            memset(log + n, 'y', 200000);
            n += 200000;
        }
        if (i + 1 < LINES)
            log[n++] = '\n';
    }
    check_same_session(log, n, NULL);
    check_same_session(log, n, "megatron");
    /* JSON lines, read by shape */
    char(*jt)[512] = malloc((size_t)LINES * 512);
    assert_non_null(jt);
    n = metrics_log(&r, log, cap, LINES, jt);
    check_same_session(log, n, "jsonl");
    free(jt);
    free(log);
    free(body);
    free(texts);
}

/* ---- mfu_run_reserve ----------------------------------------------------------------------- */

static void run_reserve_changes_no_row(void **state)
{
    (void)state;
    mfu_error e;
    assert_int_equal(mfu_run_reserve(NULL, 10, &e), MFU_E_INVALID);
    mfu_run *a = mfu_run_new(), *b = mfu_run_new();
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(mfu_run_reserve(a, 0, &e), MFU_OK);
    assert_int_equal(mfu_run_reserve(a, 5000, &e), MFU_OK);
    assert_int_equal(mfu_run_reserve(a, 100, &e), MFU_OK); /* below the capacity: nothing */
    assert_int_equal(mfu_run_count(a), 0);
    assert_null(mfu_run_column(a, MFU_COL_LOSS)); /* still empty */
    for (int i = 0; i < 7000; i++) {              /* past the reservation: growing goes on */
        mfu_step s;
        mfu_step_init(&s);
        s.step = i % 3000; /* restarts: new rows */
        s.loss = 1.0 / (i + 1);
        s.rank = i % 5 - 1;
        assert_int_equal(mfu_run_append(a, &s, NULL, &e), MFU_OK);
        assert_int_equal(mfu_run_append(b, &s, NULL, &e), MFU_OK);
        if (i == 4000)
            assert_int_equal(mfu_run_reserve(a, 20000, &e), MFU_OK);
    }
    assert_int_equal(mfu_run_count(a), mfu_run_count(b));
    for (size_t i = 0; i < mfu_run_count(a); i++) {
        mfu_step x, y;
        assert_true(mfu_run_get(a, i, &x));
        assert_true(mfu_run_get(b, i, &y));
        assert_true(same_step(&x, &y));
    }
    /* the row limit still holds after a reservation beyond it */
    mfu_run *c = mfu_run_new();
    assert_non_null(c);
    assert_int_equal(mfu_run_set_max_steps(c, 3, &e), MFU_OK);
    assert_int_equal(mfu_run_reserve(c, 1000, &e), MFU_OK);
    for (int i = 0; i < 3; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = i;
        assert_int_equal(mfu_run_append(c, &s, NULL, &e), MFU_OK);
    }
    mfu_step s;
    mfu_step_init(&s);
    s.step = 3;
    assert_int_equal(mfu_run_append(c, &s, NULL, &e), MFU_E_LIMIT);
    assert_int_equal(mfu_run_count(c), 3);
    mfu_run_free(a);
    mfu_run_free(b);
    mfu_run_free(c);
}

/* Columns of 1.5 MiB and more are laid out in 2 MiB pages (run.c): growing into that layout,
 * within it and from a reservation keeps every row. */
static void run_keeps_rows_in_large_columns(void **state)
{
    (void)state;
    enum { ROWS = 600000 }; /* 4.8 MB per 8-byte column: doubles past 262144 rows twice */
    mfu_run *a = mfu_run_new(), *b = mfu_run_new();
    assert_non_null(a);
    assert_non_null(b);
    mfu_error e;
    assert_int_equal(mfu_run_reserve(b, 230000, &e), MFU_OK); /* then grows from there */
    for (int i = 0; i < ROWS; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = i;
        s.time_s = 1e9 + i;
        s.loss = 1.0 / (i + 1);
        s.samples_per_s = i * 0.5;
        s.samples_per_s_scope = (mfu_scope)(i % 3);
        s.flags = (uint32_t)(i % 16);
        s.rank = i % 7 - 1;
        assert_int_equal(mfu_run_append(a, &s, NULL, &e), MFU_OK);
        assert_int_equal(mfu_run_append(b, &s, NULL, &e), MFU_OK);
    }
    const double *loss = mfu_run_column(a, MFU_COL_LOSS),
                 *sps = mfu_run_column(b, MFU_COL_SAMPLES_PER_S);
    const int64_t *steps = mfu_run_steps(b);
    assert_non_null(loss);
    assert_non_null(sps);
    for (int i = 0; i < ROWS; i++) {
        if (!same_bits(loss[i], 1.0 / (i + 1)) || !same_bits(sps[i], i * 0.5) || steps[i] != i)
            fail_msg("row %d lost its values", i);
        if (i % 997 == 0) {
            mfu_step x, y;
            assert_true(mfu_run_get(a, (size_t)i, &x));
            assert_true(mfu_run_get(b, (size_t)i, &y));
            assert_true(same_step(&x, &y));
            assert_int_equal(x.flags, (uint32_t)(i % 16));
            assert_int_equal(x.rank, i % 7 - 1);
            assert_int_equal(x.samples_per_s_scope, i % 3);
            assert_true(same_bits(x.time_s, 1e9 + i));
        }
    }
    mfu_run_free(a);
    mfu_run_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ctrl_find_matches_byte_loop),
        cmocka_unit_test(reader_flags_clean_lines),
        cmocka_unit_test(cleaner_in_place_matches_copy),
        cmocka_unit_test(timestamps_match_digit_loops),
        cmocka_unit_test(dec_scan_value_matches_general_reader),
        cmocka_unit_test(pow5_table_is_exact),
        cmocka_unit_test(wide_decimals_match_strtod),
        cmocka_unit_test(shapes_match_jflat),
        cmocka_unit_test(jsonl_shapes_match_lines_read_alone),
        cmocka_unit_test(megatron_shapes_match_helpers),
        cmocka_unit_test(file_matches_memory),
        cmocka_unit_test(run_reserve_changes_no_row),
        cmocka_unit_test(run_keeps_rows_in_large_columns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
