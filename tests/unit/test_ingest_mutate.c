/*
 * test_ingest_mutate.c - every fixture log under tests/data/logs, mutated by a seeded generator
 * (bytes flipped, lines cut, doubled, swapped in from another fixture, numbers replaced by
 * huge, tiny, NaN, negative or 40-digit ones, NULs, control bytes, a truncated last line),
 * read by auto-detection and by the fixture's own parser forced. Whatever the bytes:
 *   - ingest returns MFU_OK or an error with a one-line message (never a crash: the sanitizer
 *     suite runs this program under ASan + UBSan);
 *   - on success the counts hold: the run has stats.steps rows, and every line read was used,
 *     ignored or skipped;
 *   - the run survives canonical JSON-lines and back bit for bit;
 *   - a report with a model and a device (and its analysis) is computed or refused cleanly,
 *     and holds no infinite figure.
 * The seed is fixed (MFU_MUTATE_SEED overrides it, MFU_MUTATE_ROUNDS the mutants per
 * fixture) so a failure names the fixture and the mutant and can be replayed;
 * MFU_MUTATE_DUMP=FILE writes each mutant there before it is read (the last one is the one
 * that failed).
 */
#define _DEFAULT_SOURCE /* open_memstream, DT_REG */
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ingest_test.h"
#include "mfu/mfu.h"
#include "synth.h"

#define MAX_FIXTURES 128
#define MAX_FIXTURE_BYTES (1u << 20)

typedef struct fixture {
    char path[2400];
    char *data;
    size_t n;
    char format[32]; /* detected on the unmutated file; "" when it does not ingest */
} fixture;

static fixture fx[MAX_FIXTURES];
static size_t nfx;

static syn_rng rng; /* the seeded generator of the analysis tests (synth.h) */
static uint64_t rnd(void)
{
    return syn_next(&rng);
}
static size_t below(size_t n)
{
    return n ? (size_t)(rnd() % n) : 0;
}

static char *read_all(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(MAX_FIXTURE_BYTES);
    size_t got = buf ? fread(buf, 1, MAX_FIXTURE_BYTES, f) : 0;
    fclose(f);
    *n = got;
    return buf;
}

static int load_fixtures(void **state)
{
    (void)state;
    char root[1024];
    ingest_data_path(root, sizeof root, "logs");
    DIR *d = opendir(root);
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char sub[1300];
        snprintf(sub, sizeof sub, "%s/%s", root, e->d_name);
        DIR *s = opendir(sub);
        if (!s)
            continue;
        struct dirent *f;
        while ((f = readdir(s)) && nfx < MAX_FIXTURES) {
            size_t len = strlen(f->d_name);
            if (f->d_name[0] == '.' || (len > 3 && strcmp(f->d_name + len - 3, ".md") == 0))
                continue;
            fixture *x = &fx[nfx];
            snprintf(x->path, sizeof x->path, "%s/%s", sub, f->d_name);
            x->data = read_all(x->path, &x->n);
            if (!x->data)
                continue;
            mfu_run *run = NULL;
            mfu_ingest_stats st;
            mfu_error err;
            memset(&err, 0, sizeof err);
            if (ingest_buffer_opts(x->data, x->n, NULL, &run, &st, &err) == MFU_OK)
                snprintf(x->format, sizeof x->format, "%s", st.format);
            mfu_run_free(run);
            nfx++;
        }
        closedir(s);
    }
    closedir(d);
    return nfx >= 20 ? 0 : -1; /* the fixtures are there */
}

static int free_fixtures(void **state)
{
    (void)state;
    for (size_t i = 0; i < nfx; i++)
        free(fx[i].data);
    return 0;
}

/* ---- mutations ---------------------------------------------------------------------------- */

typedef struct buf {
    char *p;
    size_t n, cap;
} buf;

static void put(buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        assert_non_null(b->p);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
}

/* Start and length of a random line of s[0..n). */
static void some_line(const char *s, size_t n, size_t *a, size_t *len)
{
    size_t at = below(n);
    while (at > 0 && s[at - 1] != '\n')
        at--;
    size_t end = at;
    while (end < n && s[end] != '\n')
        end++;
    *a = at;
    *len = end < n ? end - at + 1 : end - at;
}

static const char *const numbers[] = {"nan",
                                      "NaN",
                                      "inf",
                                      "-inf",
                                      "-1",
                                      "0",
                                      "-0",
                                      "1e308",
                                      "1e-320",
                                      "9999999999999999999999",
                                      "123456789012345678901234567890123456789",
                                      "0.000000000000000000001",
                                      "1e",
                                      "--5",
                                      "+",
                                      "1,024",
                                      "N/A",
                                      "-100%",
                                      "18446744073709551616",
                                      "4.9e-324",
                                      "1.7976931348623157e309"};

/* One mutation of src into out. */
static void mutate_once(const char *src, size_t n, buf *out)
{
    out->n = 0;
    size_t a, len;
    switch (below(9)) {
    case 0: /* flip bytes */
        put(out, src, n);
        for (size_t k = 1 + below(8); k-- && out->n;)
            out->p[below(out->n)] = (char)rnd();
        break;
    case 1: /* cut a line, or the file, anywhere */
        some_line(src, n, &a, &len);
        put(out, src, a + below(len + 1));
        if (below(2))
            put(out, src + a + len, n - a - len);
        break;
    case 2: /* double a line */
        some_line(src, n, &a, &len);
        put(out, src, a + len);
        put(out, src + a, len);
        put(out, src + a + len, n - a - len);
        break;
    case 3: { /* a line of another fixture */
        const fixture *o = &fx[below(nfx)];
        size_t b, blen;
        some_line(o->data, o->n, &b, &blen);
        some_line(src, n, &a, &len);
        put(out, src, a);
        put(out, o->data + b, blen);
        if (blen && o->data[b + blen - 1] != '\n')
            put(out, "\n", 1);
        put(out, src + a, n - a);
        break;
    }
    case 4: { /* a number replaced */
        size_t at = below(n), end;
        while (at < n && !(src[at] >= '0' && src[at] <= '9'))
            at++;
        end = at;
        while (end < n && ((src[end] >= '0' && src[end] <= '9') || src[end] == '.' ||
                           src[end] == 'e' || src[end] == 'E' || src[end] == '-'))
            end++;
        const char *num = numbers[below(sizeof numbers / sizeof numbers[0])];
        put(out, src, at);
        put(out, num, strlen(num));
        put(out, src + end, n - end);
        break;
    }
    case 5: /* NULs and control bytes in a line */
        put(out, src, n);
        for (size_t k = 1 + below(4); k-- && out->n;)
            out->p[below(out->n)] = "\0\r\x1b\x7f\t\b"[below(6)];
        break;
    case 6: /* lines shuffled: two swapped */
        some_line(src, n, &a, &len);
        {
            size_t b, blen;
            some_line(src, n, &b, &blen);
            if (b < a) {
                size_t t = a, tl = len;
                a = b, len = blen, b = t, blen = tl;
            }
            if (a + len <= b) {
                put(out, src, a);
                put(out, src + b, blen);
                put(out, src + a + len, b - a - len);
                put(out, src + a, len);
                put(out, src + b + blen, n - b - blen);
            } else {
                put(out, src, n);
            }
        }
        break;
    case 7: { /* a long run of one byte inside a line */
        size_t at = below(n + 1), k = 1 + below(5000);
        put(out, src, at);
        char c = "9x \"{[|:"[below(8)];
        for (size_t i = 0; i < k; i++)
            put(out, &c, 1);
        put(out, src + at, n - at);
        break;
    }
    default: /* CRLF line ends and a last line without its newline */
        for (size_t i = 0; i < n; i++) {
            if (src[i] == '\n')
                put(out, "\r", 1);
            put(out, src + i, 1);
        }
        if (out->n && out->p[out->n - 1] == '\n')
            out->n -= 1 + (out->n > 1 && out->p[out->n - 2] == '\r');
        break;
    }
}

/* ---- properties --------------------------------------------------------------------------- */

static bool same_bits(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void check_round_trip(const mfu_run *run, const char *what)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    assert_non_null(f);
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_run_write_jsonl(run, f, &e), MFU_OK);
    fclose(f);
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = "mfu";
    mfu_run *back = NULL;
    mfu_status st = ingest_buffer_opts(text, len, &o, &back, NULL, &e);
    if (st != MFU_OK)
        fail_msg("%s: canonical form does not read back: %s", what, e.message);
    if (mfu_run_count(back) != mfu_run_count(run))
        fail_msg("%s: %zu rows back of %zu", what, mfu_run_count(back), mfu_run_count(run));
    for (size_t i = 0; i < mfu_run_count(run); i++) {
        mfu_step a, b;
        mfu_run_get(run, i, &a);
        mfu_run_get(back, i, &b);
        bool same = a.step == b.step && a.flags == b.flags && a.rank == b.rank &&
                    a.tokens_per_s_scope == b.tokens_per_s_scope &&
                    a.flops_per_s_scope == b.flops_per_s_scope && a.mfu_scope == b.mfu_scope &&
                    a.samples_per_s_scope == b.samples_per_s_scope;
        const double av[] = {a.time_s,       a.step_time_s, a.tokens,       a.samples,
                             a.loss,         a.lr,          a.grad_norm,    a.memory_bytes,
                             a.tokens_per_s, a.flops_per_s, a.mfu,          a.samples_per_s,
                             a.seq_len,      a.devices,     a.useful_tokens};
        const double bv[] = {b.time_s,       b.step_time_s, b.tokens,       b.samples,
                             b.loss,         b.lr,          b.grad_norm,    b.memory_bytes,
                             b.tokens_per_s, b.flops_per_s, b.mfu,          b.samples_per_s,
                             b.seq_len,      b.devices,     b.useful_tokens};
        for (size_t k = 0; k < sizeof av / sizeof av[0]; k++)
            same = same && same_bits(av[k], bv[k]);
        if (!same)
            fail_msg("%s: row %zu (step %lld) differs after canonical JSON-lines", what, i,
                     (long long)a.step);
    }
    mfu_run_free(back);
    free(text);
}

static void check_report(const mfu_run *run, const char *what)
{
    mfu_report_input in;
    memset(&in, 0, sizeof in);
    assert_int_equal(mfu_preset_find("gpt2", &in.arch, NULL), MFU_OK);
    in.has_arch = true;
    in.workload.seq = 1024;
    in.device = "a100-sxm";
    in.devices = 8;
    mfu_analysis_options ao;
    mfu_analysis_options_init(&ao);
    ao.intervals = true; /* the intervals' code runs, cheaply */
    in.analysis = &ao;
    mfu_report *r = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    mfu_status st = mfu_report_compute(run, &in, &r, &e);
    if (st != MFU_OK) {
        if (!e.message[0] || strchr(e.message, '\n'))
            fail_msg("%s: report error without a one-line message (%d)", what, st);
        return;
    }
    for (int s = 0; s < MFU_RS_COUNT_; s++) {
        const double *c = mfu_report_column(r, (mfu_report_series)s);
        for (size_t i = 0; c && i < mfu_report_step_count(r); i++)
            if (isinf(c[i]))
                fail_msg("%s: series %s row %zu is infinite", what,
                         mfu_report_series_name((mfu_report_series)s), i);
    }
    const mfu_analysis *a = mfu_report_analysis(r);
    for (size_t i = 0; a && i < mfu_analysis_finding_count(a); i++)
        assert_true(mfu_analysis_finding(a, i)->summary[0] != '\0');
    mfu_report_free(r);
}

static void check_one(const char *data, size_t n, const char *format, const char *what)
{
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = format;
    mfu_run *run = NULL;
    mfu_ingest_stats st;
    mfu_error e;
    memset(&e, 0, sizeof e);
    memset(&st, 0, sizeof st);
    mfu_status s = ingest_buffer_opts(data, n, &o, &run, &st, &e);
    if (s != MFU_OK) {
        assert_null(run);
        if (!e.message[0] || strchr(e.message, '\n'))
            fail_msg("%s: error %d without a one-line message", what, s);
        return;
    }
    if ((size_t)st.steps != mfu_run_count(run))
        fail_msg("%s: stats say %ld steps, the run has %zu", what, st.steps, mfu_run_count(run));
    if (st.used + st.ignored + st.skipped + st.too_long != st.lines)
        fail_msg("%s: %ld lines read but %ld used + %ld ignored + %ld skipped + %ld too long", what,
                 st.lines, st.used, st.ignored, st.skipped, st.too_long);
    check_round_trip(run, what);
    check_report(run, what);
    mfu_run_free(run);
}

static void mutants_never_break_ingest(void **state)
{
    (void)state;
    const char *seed_env = getenv("MFU_MUTATE_SEED");
    const char *rounds_env = getenv("MFU_MUTATE_ROUNDS");
    uint64_t seed = seed_env ? strtoull(seed_env, NULL, 10) : 20261129;
    long rounds = rounds_env ? strtol(rounds_env, NULL, 10) : 24;
    buf m = {NULL, 0, 0}, m2 = {NULL, 0, 0};
    size_t tried = 0, ok_runs = 0;
    for (size_t f = 0; f < nfx; f++) {
        for (long r = 0; r < rounds; r++) {
            rng.s = seed ^ (f * 0x9E3779B97F4A7C15ULL) ^ ((uint64_t)r << 32);
            mutate_once(fx[f].data, fx[f].n, &m);
            for (size_t k = below(3); k--;) { /* up to 2 more mutations on top */
                mutate_once(m.p ? m.p : "", m.n, &m2);
                buf t = m;
                m = m2;
                m2 = t;
            }
            char what[2600];
            snprintf(what, sizeof what, "%s mutant %ld (seed %llu)", fx[f].path, r,
                     (unsigned long long)seed);
            const char *dump = getenv("MFU_MUTATE_DUMP"); /* the last mutant tried, to replay */
            FILE *df = dump ? fopen(dump, "wb") : NULL;
            if (df) {
                fwrite(m.p ? m.p : "", 1, m.n, df);
                fclose(df);
            }
            check_one(m.p ? m.p : "", m.n, NULL, what);
            if (fx[f].format[0])
                check_one(m.p ? m.p : "", m.n, fx[f].format, what);
            if (r % 6 == 0) /* another parser forced on it */
                check_one(m.p ? m.p : "", m.n, mfu_ingest_format_name(below(16)), what);
            tried++;
        }
        if (fx[f].format[0])
            ok_runs++;
    }
    free(m.p);
    free(m2.p);
    print_message("%zu fixtures (%zu ingest as they are), %zu mutants\n", nfx, ok_runs, tried);
    assert_true(ok_runs >= 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(mutants_never_break_ingest),
    };
    return cmocka_run_group_tests(tests, load_fixtures, free_fixtures);
}
