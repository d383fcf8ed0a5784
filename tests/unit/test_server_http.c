/*
 * test_server_http.c - the server's request parsing and answer writing (src/server/route.c,
 * buf.c): strict paths and percent-decoding, methods, the token check, the HTML-safe JSON
 * writer, UTF-8 repair, the buffer limit and the series numbers (%.17g, byte for byte).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ingest/fast.h"
#include "server/internal.h"

static mfu__route_kind parse(const char *method, const char *path, mfu__route *r)
{
    return mfu__route_parse(method, path, r);
}

static void routes_are_matched_exactly(void **state)
{
    (void)state;
    mfu__route r;
    assert_int_equal(parse("GET", "/", &r), MFU__R_INDEX);
    assert_int_equal(parse("HEAD", "/index.html", &r), MFU__R_INDEX);
    assert_int_equal(parse("GET", "/assets/app.js", &r), MFU__R_ASSET);
    assert_string_equal(r.asset, "app.js");
    assert_int_equal(parse("GET", "/api/runs", &r), MFU__R_RUNS);
    assert_int_equal(parse("GET", "/api/runs/gpt%20small", &r), MFU__R_RUN);
    assert_string_equal(r.run, "gpt small");
    assert_int_equal(parse("GET", "/api/runs/a+b/series", &r), MFU__R_SERIES);
    assert_string_equal(r.run, "a+b"); /* '+' is a plus in a path */
    assert_int_equal(parse("GET", "/api/runs/x/segments", &r), MFU__R_SEGMENTS);
    assert_int_equal(parse("GET", "/api/runs/x/findings", &r), MFU__R_FINDINGS);
    assert_int_equal(parse("POST", "/api/runs/x/steps", &r), MFU__R_STEPS);
    assert_int_equal(parse("GET", "/api/compare", &r), MFU__R_COMPARE);
    assert_int_equal(parse("GET", "/api/events", &r), MFU__R_EVENTS);
    assert_int_equal(parse("GET", "/metrics", &r), MFU__R_METRICS);
    /* near misses are 404, never a looser match */
    const char *missing[] = {"/api/runs/", "/api/runs/x/",      "/api",
                             "/metrics/",  "/assets",           "/api/runs/x/series/y",
                             "/API/runs",  "/api/runs/x/other", "//"};
    for (size_t i = 0; i < sizeof missing / sizeof *missing; i++) {
        assert_int_equal(parse("GET", missing[i], &r), MFU__R_NONE);
        assert_int_equal(r.status, 404);
    }
}

static void traversal_and_bad_encoding_are_refused(void **state)
{
    (void)state;
    mfu__route r;
    const char *bad[] = {"/assets/../../etc/passwd",
                         "/assets/%2e%2e/%2e%2e/etc/passwd",
                         "/assets/%2E%2E%2Fetc%2Fpasswd",
                         "/assets/..%2f..%2fetc%2fpasswd",
                         "/assets/.%2e/x",
                         "/assets/.",
                         "/../etc/passwd",
                         "/api/runs/a%2fb",
                         "/api/runs/a%5cb",
                         "/api/runs/a%00b",
                         "/api/runs/a%0ab",
                         "/api/runs/a%7f",
                         "/api/runs/%zz",
                         "/api/runs/%4",
                         "/api/runs/%"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(parse("GET", bad[i], &r), MFU__R_NONE);
        assert_int_equal(r.status, 400);
        assert_true(strlen(r.message) > 0);
    }
    /* double encoding is not decoded twice: %252e is the name "%2e", a plain unknown asset */
    assert_int_equal(parse("GET", "/assets/%252e%252e", &r), MFU__R_ASSET);
    assert_string_equal(r.asset, "%2e%2e");
    assert_int_equal(parse("GET", "relative", &r), MFU__R_NONE);
    assert_int_equal(r.status, 400);
}

static void limits_of_names_and_paths(void **state)
{
    (void)state;
    mfu__route r;
    char path[MFU_SERVER_MAX_PATH_BYTES + 64];
    /* a run name of 127 bytes is accepted, 128 is refused */
    memcpy(path, "/api/runs/", 10);
    memset(path + 10, 'n', 127);
    path[137] = '\0';
    assert_int_equal(parse("GET", path, &r), MFU__R_RUN);
    assert_int_equal(strlen(r.run), 127);
    path[137] = 'n';
    path[138] = '\0';
    assert_int_equal(parse("GET", path, &r), MFU__R_NONE);
    assert_int_equal(r.status, 400);
    /* the path limit */
    memset(path, 'a', sizeof path - 1);
    path[0] = '/';
    path[MFU_SERVER_MAX_PATH_BYTES + 1] = '\0';
    assert_int_equal(parse("GET", path, &r), MFU__R_NONE);
    assert_int_equal(r.status, 414);
    /* too many segments */
    assert_int_equal(parse("GET", "/a/b/c/d/e/f/g", &r), MFU__R_NONE);
    assert_int_equal(r.status, 404);
}

static void methods(void **state)
{
    (void)state;
    mfu__route r;
    assert_int_equal(parse("POST", "/api/runs", &r), MFU__R_NONE);
    assert_int_equal(r.status, 405);
    assert_string_equal(r.allow, "GET, HEAD");
    assert_int_equal(parse("GET", "/api/runs/x/steps", &r), MFU__R_NONE);
    assert_int_equal(r.status, 405);
    assert_string_equal(r.allow, "POST");
    assert_int_equal(parse("DELETE", "/api/runs/x", &r), MFU__R_NONE);
    assert_int_equal(r.status, 405);
    assert_int_equal(parse("PUT", "/nope", &r), MFU__R_NONE);
    assert_int_equal(r.status, 404);
}

static void percent_decoding(void **state)
{
    (void)state;
    char out[16];
    size_t n = 0;
    assert_true(mfu__pct_decode("a%41+b", 6, true, out, sizeof out, &n));
    assert_string_equal(out, "aA b");
    assert_int_equal(n, 4);
    assert_true(mfu__pct_decode("a%41+b", 6, false, out, sizeof out, &n));
    assert_string_equal(out, "aA+b");
    assert_false(mfu__pct_decode("%4", 2, false, out, sizeof out, &n));
    assert_false(mfu__pct_decode("%g1", 3, false, out, sizeof out, &n));
    assert_false(mfu__pct_decode("%00", 3, false, out, sizeof out, &n));
    /* capacity: 15 bytes + NUL fit, 16 do not */
    assert_true(mfu__pct_decode("aaaaaaaaaaaaaaa", 15, false, out, sizeof out, &n));
    assert_false(mfu__pct_decode("aaaaaaaaaaaaaaaa", 16, false, out, sizeof out, &n));
}

static void tokens(void **state)
{
    (void)state;
    const char *t = "s3cret-token-0123456789";
    assert_true(mfu__token_equal(t, t, strlen(t)));
    assert_false(mfu__token_equal(t, "s3cret-token-012345678", 22));   /* a prefix */
    assert_false(mfu__token_equal(t, "s3cret-token-01234567890", 24)); /* longer */
    assert_false(mfu__token_equal(t, "S3cret-token-0123456789", 23));  /* case */
    assert_false(mfu__token_equal(t, "s3cret-token-0123456788", 23));  /* last byte */
    assert_false(mfu__token_equal(t, "", 0));
    assert_false(mfu__token_equal(t, NULL, 5));
    /* a presented token that repeats the expected one is still refused (length differs) */
    assert_false(mfu__token_equal("abab", "ab", 2));

    const char *tok;
    size_t n;
    assert_true(mfu__bearer_token("Bearer abc", &tok, &n));
    assert_int_equal(n, 3);
    assert_memory_equal(tok, "abc", 3);
    assert_true(mfu__bearer_token("  bearer \t abc  ", &tok, &n));
    assert_int_equal(n, 3);
    assert_false(mfu__bearer_token("Basic abc", &tok, &n));
    assert_false(mfu__bearer_token("Bearer", &tok, &n));
    assert_false(mfu__bearer_token("Bearer   ", &tok, &n));
    assert_false(mfu__bearer_token("Bearerabc", &tok, &n));
    assert_false(mfu__bearer_token(NULL, &tok, &n));
}

static char *dump(void (*fn)(mfu__jw *))
{
    mfu__sb b;
    mfu__sb_init(&b, 0);
    mfu__jw w;
    mfu__jw_init(&w, &b);
    fn(&w);
    return mfu__sb_take(&b, NULL);
}

static void doc_nested(mfu__jw *w)
{
    mfu__jw_obj(w);
    mfu__jw_key(w, "a");
    mfu__jw_arr(w);
    mfu__jw_int(w, 1);
    mfu__jw_num(w, 0.1);
    mfu__jw_num(w, INFINITY);
    mfu__jw_null(w);
    mfu__jw_obj(w);
    mfu__jw_end_obj(w);
    mfu__jw_end_arr(w);
    mfu__jw_key(w, "b");
    mfu__jw_bool(w, true);
    mfu__jw_key(w, "c");
    mfu__jw_obj(w);
    mfu__jw_key(w, "d");
    mfu__jw_num(w, 3e20);
    mfu__jw_end_obj(w);
    mfu__jw_end_obj(w);
}

static void doc_hostile(mfu__jw *w)
{
    mfu__jw_arr(w);
    mfu__jw_str(w, "</script><script>alert('x')</script>&");
    mfu__jw_str(w, "q\"\\\n\t\x01");
    mfu__jw_str(w, "bad \xff\xfe utf8 \xc3\xa9 \xe2\x80\xa8");
    mfu__jw_str(w, "\xed\xa0\x80"); /* a surrogate: invalid in UTF-8 */
    mfu__jw_end_arr(w);
}

static void json_writer(void **state)
{
    (void)state;
    char *s = dump(doc_nested);
    assert_string_equal(s, "{\"a\":[1,0.1,null,null,{}],\"b\":true,\"c\":{\"d\":3e+20}}");
    free(s);
    s = dump(doc_hostile);
    assert_string_equal(s, "[\"\\u003c/script\\u003e\\u003cscript\\u003ealert(\\u0027x\\u0027)"
                           "\\u003c/script\\u003e\\u0026\","
                           "\"q\\\"\\\\\\n\\t\\u0001\","
                           "\"bad \\ufffd\\ufffd utf8 \xc3\xa9 \\u2028\","
                           "\"\\ufffd\\ufffd\\ufffd\"]");
    assert_null(strchr(s, '<'));
    free(s);
}

static void buffer_limit(void **state)
{
    (void)state;
    mfu__sb b;
    mfu__sb_init(&b, 10);
    assert_true(mfu__sb_puts(&b, "0123456789"));
    assert_false(b.failed);
    assert_false(mfu__sb_put(&b, "x", 1)); /* byte 11 */
    assert_true(b.failed);
    assert_false(mfu__sb_puts(&b, "")); /* stays failed */
    assert_int_equal(b.len, 10);
    mfu__sb_free(&b);
    mfu__sb_init(&b, 0);
    for (int i = 0; i < 1000; i++)
        assert_true(mfu__sb_printf(&b, "%d,", i));
    assert_int_equal(b.len, 10 * 2 + 90 * 3 + 900 * 4);
    assert_int_equal(b.p[b.len], '\0');
    mfu__sb_free(&b);
}

/* mfu__fmt_g(.., 17), the series API's printer, writes what snprintf's "%.17g" writes, byte for
 * byte: random bit patterns, random numbers of every scale of a series, the neighbours of powers of
 * ten and of numbers that round up to one (9.99...95), exact ties (integers and a half), and the
 * edges of its exact range (where it hands over to snprintf). */
static uint64_t g17_rng = 0x9e3779b97f4a7c15ull;
static uint64_t g17_next(void)
{
    g17_rng ^= g17_rng << 13;
    g17_rng ^= g17_rng >> 7;
    g17_rng ^= g17_rng << 17;
    return g17_rng;
}

static void g_check(double v, int prec)
{
    if (!isfinite(v))
        return;
    char want[64], got[64];
    snprintf(want, sizeof want, "%.*g", prec, v);
    size_t n = mfu__fmt_g(got, v, prec);
    if (n != strlen(want) || strcmp(want, got) != 0)
        fail_msg("%%.%dg of %a: snprintf '%s', mfu__fmt_g '%s'", prec, v, want, got);
}

static void g17_check(double v)
{
    g_check(v, 17);
}

static void fmt_g17_is_printf(void **state)
{
    (void)state;
    for (int i = 0; i < 300000; i++) {
        uint64_t b = g17_next();
        double v;
        memcpy(&v, &b, sizeof v);
        g17_check(v);                                               /* any bits */
        double u = (double)(g17_next() >> 11) / 9007199254740992.0; /* [0, 1) */
        double e = ldexp(1.0, (int)(g17_next() % 90) - 30);
        g17_check(u * e);
        g17_check(-u * e);
        g17_check(u);
        g17_check((double)(g17_next() % 100000000) + 0.5);  /* a tie at the 17th digit */
        g17_check((double)(g17_next() % 1000000) / 1024.0); /* few binary digits */
        g17_check(1.5 + 0.02 * u);                          /* step times */
        g17_check(2 + 1 / (1 + (double)(g17_next() % 10000000) / 1e5)); /* losses */
    }
    for (int k = -330; k <= 310; k++) {
        double p = pow(10.0, k);
        for (int j = -40; j <= 40; j++) {
            double v = p;
            for (int t = 0; t < (j < 0 ? -j : j); t++)
                v = nextafter(v, j < 0 ? 0.0 : INFINITY);
            g17_check(v);
            g17_check(-v);
            g17_check(9.9999999999999995 * v);
        }
    }
    const double edges[] = {1e-6,
                            1e17,
                            9007199254740992.0,
                            9007199254740993.0,
                            0.0,
                            -0.0,
                            5e-324,
                            2.2250738585072014e-308,
                            1.7976931348623157e308,
                            0.1,
                            0.30000000000000004,
                            123456.789,
                            1e15,
                            1e15 + 0.5,
                            1e16 + 2};
    for (size_t i = 0; i < sizeof edges / sizeof *edges; i++) {
        g17_check(edges[i]);
        g17_check(nextafter(edges[i], 0.0));
        g17_check(nextafter(edges[i], INFINITY));
    }
    /* the other precisions (the printer is "%.{prec}g" for 1..17): random scales, ties at
     * each precision's last digit, the neighbours of the powers of ten */
    for (int i = 0; i < 20000; i++) {
        double u = (double)(g17_next() >> 11) / 9007199254740992.0;
        double e = ldexp(1.0, (int)(g17_next() % 120) - 60);
        double p10 = pow(10, (int)(g17_next() % 40) - 20);
        for (int prec = 1; prec <= 17; prec++) {
            g_check(u * e, prec);
            g_check(-u * e, prec);
            g_check((double)(g17_next() % 100000) + 0.5, prec);
            g_check(nextafter(p10, 0), prec);
            g_check(nextafter(p10, INFINITY), prec);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(routes_are_matched_exactly),
        cmocka_unit_test(traversal_and_bad_encoding_are_refused),
        cmocka_unit_test(limits_of_names_and_paths),
        cmocka_unit_test(methods),
        cmocka_unit_test(percent_decoding),
        cmocka_unit_test(tokens),
        cmocka_unit_test(json_writer),
        cmocka_unit_test(buffer_limit),
        cmocka_unit_test(fmt_g17_is_printf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
