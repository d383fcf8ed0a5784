/*
 * util/util.h - small internal helpers shared by every module (not part of the public API).
 *
 * Error reporting: mfu__fail() fills a caller's optional mfu_error and returns the code, so a
 * failing path reads `return mfu__fail(err, MFU_E_PARSE, line, "expected ...");`.
 * Number parsing is strict: the whole string must be a number, finite, in range.
 */
#ifndef MFU_UTIL_H
#define MFU_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mfu/common.h"

#if defined(__GNUC__)
#define MFU__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define MFU__PRINTF(a, b)
#endif

#define MFU__ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Fill *err (if not NULL) with code, line and a formatted one-line message; return code.
 * field is cleared. Messages longer than MFU_ERROR_MESSAGE_MAX are truncated. */
mfu_status mfu__fail(mfu_error *err, mfu_status code, long line, const char *fmt, ...)
    MFU__PRINTF(4, 5);

/* As mfu__fail, and also records the field or option name concerned (truncated to fit). */
mfu_status mfu__fail_field(mfu_error *err, mfu_status code, const char *field, const char *fmt, ...)
    MFU__PRINTF(4, 5);

/* Copy src into dst of size n (n > 0), always NUL-terminated; returns strlen(src) so that a
 * result >= n means truncation. */
size_t mfu__strlcpy(char *dst, const char *src, size_t n);

/* snprintf that appends to dst (size n) after its current string; never overflows. Returns
 * false when the result was truncated. */
bool mfu__appendf(char *dst, size_t n, const char *fmt, ...) MFU__PRINTF(3, 4);

/* ASCII case-insensitive comparisons (locale-independent). */
int mfu__strcasecmp(const char *a, const char *b);
int mfu__strncasecmp(const char *a, const char *b, size_t n);
/* First occurrence of needle in hay, ignoring ASCII case; NULL when absent. */
const char *mfu__strcasestr(const char *hay, const char *needle);

/* Edit distance between a and b (insertions, deletions, substitutions and swaps of two
 * neighbours: "modle" is 1 from "model"), ASCII case-insensitive; SIZE_MAX when either is
 * longer than MFU__EDIT_DISTANCE_MAX bytes. */
#define MFU__EDIT_DISTANCE_MAX 256
size_t mfu__edit_distance(const char *a, const char *b);

/* "Did you mean": the names[0..n) nearest to query (NULL entries skipped), written into buf
 * (size bufn) as "x", "x or y" or "x, y or z" (at most 3, ties in list order). Near means an
 * edit distance of at most max(1, L / 3), L the letters and digits of query, counted on the
 * whole names or on their
 * letters and digits alone (so "llama-3-70b" finds "llama3-70b"); a name that starts with
 * query (3 bytes or more) counts as one edit away. Returns how many were written;
 * 0 leaves buf "". */
size_t mfu__did_you_mean(const char *query, const char *const *names, size_t n, char *buf,
                         size_t bufn);

/* Strict parsers: the whole of s (no leading/trailing junk except surrounding blanks) must be
 * a number. parse_double rejects NaN and infinities. Return false without touching *out on
 * failure. */
bool mfu__parse_double(const char *s, double *out);

/* The fewest of 15, 16 or 17 significant digits ("%.Ng") that read back as v exactly, into
 * buf (n >= 32 holds any double): printf's shortest round-trip form. Returns the length. */
size_t mfu__fmt_roundtrip(char *buf, size_t n, double v);

/* v in SI units of `unit` with three significant digits, into buf: "312 TFLOP/s",
 * "1.23 PFLOP/s", "45.6 GFLOP/s", "820 MFLOP/s", "0 FLOP/s". The prefix is the largest of k,
 * M, G, T, P, E that leaves at least 1 (none below 1000; E past it), chosen after rounding, so
 * 999.96e12 gives "1.00 PFLOP/s", never "1000 TFLOP/s". Below 1, "%.3g" without a prefix. A
 * negative v keeps its sign; NaN gives "-" (unknown, as the tables print it); +-infinity "inf
 * UNIT" / "-inf UNIT". unit may be "" (then "1.23 G"). The one formatter of FLOP/s (and FLOP)
 * in text and HTML (docs/internals/util.md). Returns the length snprintf reports. */
size_t mfu__fmt_si(char *buf, size_t n, double v, const char *unit);
/* mfu__fmt_si with `digits` significant digits (1..9, clamped): 4 for a peak a reader matches
 * against a table ("989.5 TFLOP/s"). */
size_t mfu__fmt_si_digits(char *buf, size_t n, double v, const char *unit, int digits);
/* mfu__fmt_si_digits without trailing zeros after the point, as %g drops them ("500 GFLOP",
 * "1.5 kB", "1 PFLOP/s" for 999.96e12 at 4 digits): the CLI's and the HTML page's other SI
 * quantities (FLOP, bytes, tokens). Returns the length written. */
size_t mfu__fmt_si_g(char *buf, size_t n, double v, const char *unit, int digits);

/* The k-th smallest of v[0..n) (0-based, k < n, no NaN in v), found by selection: v is
 * reordered so that v[0..k) <= v[k] <= v[k+1..n). Average O(n). */
double mfu__select_kth(double *v, size_t n, size_t k);
bool mfu__parse_int64(const char *s, int64_t *out);

/* ---- order statistics (stats.c) ----------------------------------------------------------- */

/* The q-quantile (0..1, clamped) of v[0..n), Hyndman & Fan type 7 (linear interpolation between
 * order statistics, numpy's default), by selection: v is reordered, no NaN may be in it. NaN for
 * n == 0. The one quantile rule of the project: every median shown comes from here. */
double mfu__quantile_inplace(double *v, size_t n, double q);
/* mfu__quantile_inplace(v, n, 0.5). */
double mfu__median_inplace(double *v, size_t n);
/* The median of the finite values among x[0..n) (NaN when none); scratch holds n doubles and
 * is overwritten, x is untouched. */
double mfu__median_finite(const double *x, size_t n, double *scratch);
/* Robust noise of a series with level shifts: 1.4826 x the median absolute deviation of its
 * first differences / √2 (a shift moves one difference, not the median). 0 for n < 3. tmp
 * holds n doubles. */
double mfu__robust_noise(const double *v, size_t n, double *tmp);

/* v as an int64_t, saturated: NaN gives 0, anything at or past +-2^63 the nearest end. A cast
 * of a double out of range is undefined behaviour (clang's UBSan reports it); a log can print
 * "global batch size: 10888888888888888824". */
static inline int64_t mfu__int64_sat(double v)
{
    if (v != v)
        return 0;
    if (v >= 9223372036854775807.0)
        return INT64_MAX;
    if (v <= -9223372036854775808.0)
        return INT64_MIN;
    return (int64_t)v;
}

/* strdup in strict C11 (NULL on allocation failure or NULL input). */
char *mfu__strdup(const char *s);

/* Seconds on the monotonic clock (CLOCK_MONOTONIC): for intervals and timeouts only, never a
 * wall time. The one clock of the server, the follower, watch and ingest's progress. */
double mfu__now(void);

/* Grow n double columns from old_cap to cap rows (cap > old_cap): cols[k] with present[k] by
 * realloc, every other one pointed at *nan, one shared column of NaN grown the same way
 * (absent columns cost one column, not n). false when out of memory: what grew stays valid
 * and every pointer usable at old_cap rows. The figures' and the analysis series' columns. */
bool mfu__cols_grow(double **cols, const bool *present, int n, double **nan, size_t old_cap,
                    size_t cap);

#endif /* MFU_UTIL_H */
