/*
 * test_ingest_core.c - the ingest framework: number and timestamp parsing, line cleaning,
 * the reader (CRLF, carriage-return redraws, truncated last line, gzip, zstd, the line limit
 * with a 100 MB line, binary input), detection and its errors, and the run table (repeated
 * steps, restarts, the row limit).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <zlib.h>
#include <zstd.h>

#include "ingest/internal.h"
#include "ingest_test.h"

/* ---- numbers ---------------------------------------------------------------------------- */

static mfu__num num(const char *s)
{
    mfu__num n;
    if (!mfu__num_parse(mfu__span_of(s), &n))
        fail_msg("'%s' did not parse", s);
    return n;
}

static void numbers(void **state)
{
    (void)state;
    assert_near(num("1.825991E+00").value, 1.825991, 1e-15);
    assert_near(num("8.57e-07").value, 8.57e-07, 1e-15);
    assert_near(num("10,050").value, 10050, 0);
    assert_near(num("40,370,176").value, 40370176, 0);
    assert_near(num("'3.41'").value, 3.41, 1e-15);
    assert_near(num("\"0.0001333\"").value, 0.0001333, 1e-15);
    mfu__num n = num("66.91GiB");
    assert_int_equal(n.unit, MFU__UNIT_BYTES);
    assert_near(n.value, 66.91 * 1073741824.0, 1e-15);
    assert_near(n.printed, 66.91, 0);
    n = num("150.3TFLOPS");
    assert_int_equal(n.unit, MFU__UNIT_FLOPS_PER_S);
    assert_near(n.value, 150.3e12, 1e-15);
    assert_near(num("339.16 TFLOP/s").value, 339.16e12, 1e-15);
    n = num("76.67 ms");
    assert_int_equal(n.unit, MFU__UNIT_SECONDS);
    assert_near(n.value, 0.07667, 1e-15);
    assert_near(num("34.09 us").value, 34.09e-6, 1e-15);
    assert_near(num("561.94ms").value, 0.56194, 1e-15);
    assert_near(num("2 min").value, 120, 0);
    assert_near(num("0.26GB").value, 0.26e9, 1e-15);
    n = num("13.99%");
    assert_int_equal(n.unit, MFU__UNIT_FRACTION);
    assert_near(n.value, 0.1399, 1e-15);
    assert_near(num("-100.00%").value, -1.0, 0);
    assert_int_equal(num("nan").kind, MFU__NUM_NAN);
    assert_int_equal(num("NAN").kind, MFU__NUM_NAN);
    n = num("-inf");
    assert_int_equal(n.kind, MFU__NUM_INF);
    assert_true(n.value < 0 && isinf(n.value));
    assert_int_equal(num("N/A").kind, MFU__NUM_NA);
    assert_int_equal(num("None").kind, MFU__NUM_NA);
    assert_int_equal(num("-").kind, MFU__NUM_NA);
    /* not numbers */
    mfu__num x;
    assert_false(mfu__num_parse(mfu__span_of("abc"), &x));
    assert_false(mfu__num_parse(mfu__span_of("1,23"), &x)); /* not a thousands group */
    assert_false(mfu__num_parse(mfu__span_of("12 apples"), &x));
    assert_false(mfu__num_parse(mfu__span_of("'3.41"), &x)); /* unclosed quote */
    assert_false(mfu__num_parse(mfu__span_of("1e999"), &x));
    assert_false(mfu__num_parse(mfu__span_of(""), &x));
    assert_false(mfu__num_parse(mfu__span_of("10 steps"), &x)); /* "s" must end the word */
    int64_t i;
    assert_true(mfu__int_parse(mfu__span_of(" 1,024 "), &i));
    assert_int_equal(i, 1024);
    assert_false(mfu__int_parse(mfu__span_of("794.5"), &i));
    assert_false(mfu__int_parse(mfu__span_of("4GiB"), &i));
    /* unit scaling by powers of ten is exact in decimal */
    assert_true(mfu__scale10(15210.6, -3) == 15.2106);
    assert_true(mfu__scale10(410, -3) == 0.41);
    assert_true(mfu__scale10(1.5e-5, 3) == 0.015);
    assert_true(num("15210.6ms").value == 15.2106);
    assert_true(num("34.29%").value == 0.3429);
    assert_true(num("339.16TFLOPS").value == 339.16e12);
    /* scan stops after the number and its unit */
    const char *s = "49.66GiB(52.28%)  tps";
    const char *p = s;
    assert_true(mfu__num_scan(&p, s + strlen(s), &x));
    assert_string_equal(p, "(52.28%)  tps");
}

static void datetimes(void **state)
{
    (void)state;
    double t;
    size_t used;
    assert_true(mfu__datetime_scan(mfu__span_of("1970-01-01 00:00:00"), &t, &used));
    assert_near(t, 0, 0);
    /* 2024-09-03 16:38:39 UTC = 19969 days + 59919 s */
    assert_true(mfu__datetime_scan(mfu__span_of("2024-09-03 16:38:39] x"), &t, &used));
    assert_near(t, 19969.0 * 86400 + 16 * 3600 + 38 * 60 + 39, 0);
    assert_int_equal(used, 19);
    assert_true(mfu__datetime_scan(mfu__span_of("2025-06-16 22:30:48,735 - root"), &t, &used));
    assert_near(t - floor(t), 0.735, 1e-6);
    assert_int_equal(used, 23);
    assert_true(mfu__datetime_scan(mfu__span_of("2000-02-29T12:00:00Z"), &t, &used));
    assert_near(t, 951825600.0, 0);
    assert_false(mfu__datetime_scan(mfu__span_of("2024-13-03 16:38:39"), &t, &used));
    assert_false(mfu__datetime_scan(mfu__span_of("2024-09-03"), &t, &used));
    assert_false(mfu__datetime_scan(mfu__span_of("iteration 10/100"), &t, &used));
}

static void spans(void **state)
{
    (void)state;
    mfu__span rest = mfu__span_of("a: 1 | b: 2 |"), piece, k, v;
    assert_true(mfu__split_next(&rest, "|", &piece));
    assert_true(mfu__kv(piece, ": ", &k, &v));
    assert_true(mfu__span_eq(k, "a"));
    assert_true(mfu__span_eq(v, "1"));
    assert_true(mfu__split_next(&rest, "|", &piece));
    assert_true(mfu__span_eq(mfu__span_trim(piece), "b: 2"));
    assert_false(mfu__split_next(&rest, "|", &piece));
    assert_false(mfu__kv(mfu__span_of("no separator"), ": ", &k, &v));
    char small[4];
    mfu__span_copy(mfu__span_of("abcdef"), small, sizeof small);
    assert_string_equal(small, "abc");
}

/* ---- cleaning --------------------------------------------------------------------------- */

static mfu__line clean(const char *text, char *buf)
{
    mfu__line ln;
    mfu__clean_line(text, strlen(text), 7, buf, &ln);
    return ln;
}

static void cleaning(void **state)
{
    (void)state;
    char buf[512];
    mfu__line ln = clean(
        "[rank0]:[titan] 2025-06-16 22:30:50,322 - root - INFO - step: 200  loss:  6.1384", buf);
    assert_string_equal(ln.text, "step: 200  loss:  6.1384");
    assert_int_equal(ln.rank, 0);
    assert_near(ln.prefix_time_s, 1750113050.322, 1e-9);
    assert_int_equal(ln.lineno, 7);

    ln = clean("\x1b[31mstep:  4  \x1b[32mloss:  7.62585\x1b[39m", buf);
    assert_string_equal(ln.text, "step:  4  loss:  7.62585");
    assert_string_equal(ln.raw, "step:  4  loss:  7.62585");

    ln = clean("12: iter 10: loss 2.0", buf);
    assert_string_equal(ln.text, "iter 10: loss 2.0");
    assert_int_equal(ln.rank, 12);

    ln = clean("> 2023-03-22 09:30:39 iter 2920: loss 3.9883", buf);
    assert_string_equal(ln.text, "iter 2920: loss 3.9883");
    assert_true(!isnan(ln.prefix_time_s));

    ln = clean(" [2024-09-03 16:38:39] iteration       10/  500000 |", buf);
    assert_string_equal(ln.text, "iteration       10/  500000 |");

    ln = clean("stdout: [2022-12-20 08:26:26,101] [INFO] [timer.py:197:stop] 0/17, "
               "RunningAvgSamplesPerSec=158.3",
               buf);
    assert_string_equal(ln.text, "0/17, RunningAvgSamplesPerSec=158.3");

    ln = clean("[2022-03-11 02:06:58,985] [INFO] [logging.py:69:log_dist] [Rank 0] step=40", buf);
    assert_string_equal(ln.text, "[Rank 0] step=40"); /* content bracket kept */

    ln = clean("2026-08-10 15:55:20 | INFO | root | step 9 | epoch 0 | loss 0.6974", buf);
    assert_string_equal(ln.text, "step 9 | epoch 0 | loss 0.6974");

    ln = clean("INFO:torchtune.utils.logging:Model is initialized", buf);
    assert_string_equal(ln.text, "Model is initialized");

    ln = clean(
        "I0811 21:54:55.531340     514 metric_logger.py:226] completed step: 3, seconds: 1.0", buf);
    assert_string_equal(ln.text, "completed step: 3, seconds: 1.0");

    ln = clean("[2026-06-20 15:38:29,823] [INFO] [axolotl.train] Training completed!", buf);
    assert_string_equal(ln.text, "Training completed!");

    ln = clean("rank0[73][MainThread]: [batch=3/5]:", buf);
    assert_string_equal(ln.text, "[batch=3/5]:");
    assert_int_equal(ln.rank, 0);

    ln = clean("\t Train time/batch: 19", buf);
    assert_string_equal(ln.text, "Train time/batch: 19");

    ln = clean(">", buf);
    assert_string_equal(ln.text, "");
    assert_int_equal(ln.len, 0);

    /* content that looks like a prefix but is not one stays */
    ln = clean("iter 3000: loss 4.2490, time 35392.33ms", buf);
    assert_string_equal(ln.text, "iter 3000: loss 4.2490, time 35392.33ms");
    ln = clean("2024-01-01 10:00:00,5,7", buf); /* a CSV cell, not a log timestamp */
    assert_string_equal(ln.text, "2024-01-01 10:00:00,5,7");
}

/* ---- reader ----------------------------------------------------------------------------- */

static const char *const megatron_lines[] = {
    " iteration       10/     100 | consumed samples:         1280 | elapsed time per "
    "iteration (ms): 1000.0 | learning rate: 1.000000E-04 | global batch size:   128 | lm loss: "
    "5.000000E+00 | loss scale: 1.0 | number of skipped iterations:   0 | number of nan "
    "iterations:   0 |",
    " iteration       20/     100 | consumed samples:         2560 | elapsed time per "
    "iteration (ms): 1100.0 | learning rate: 1.000000E-04 | global batch size:   128 | lm loss: "
    "4.000000E+00 | loss scale: 1.0 | number of skipped iterations:   0 | number of nan "
    "iterations:   0 |",
};

static void crlf_and_truncated_last_line(void **state)
{
    (void)state;
    char text[2048];
    snprintf(text, sizeof text, "%s\r\n%s", megatron_lines[0], megatron_lines[1]);
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(text, NULL, &st);
    assert_int_equal(mfu_run_count(run), 2);
    assert_near(ingest_row(run, 1).step_time_s, 1.1, 1e-12);
    assert_true(st.truncated_last_line);
    assert_int_equal(st.lines, 2);
    mfu_run_free(run);

    /* the last line cut mid-way: skipped with a reason, the flag set */
    snprintf(text, sizeof text, "%s\n iteration       30/     100 | consumed samples:  38",
             megatron_lines[0]);
    run = ingest_text(text, NULL, &st);
    assert_int_equal(mfu_run_count(run), 1);
    assert_true(st.truncated_last_line);
    assert_int_equal(st.skipped, 1);
    assert_int_equal(st.skip_samples[0].line, 2);
    assert_non_null(strstr(st.skip_samples[0].reason, "elapsed time per iteration"));
    mfu_run_free(run);
}

static void carriage_return_redraws(void **state)
{
    (void)state;
    /* tqdm redraws separated by \r with a nanoGPT line after the bar, on one physical line */
    const char *text = "  5%|5    | 5/100 [00:01<00:19,  4.80it/s]\r 6%|6    | 6/100 "
                       "[00:01<00:19,  4.80it/s]\riter 6: loss 2.5000, time 100.00ms, mfu "
                       "-100.00%\n"
                       "iter 7: loss 2.4000, time 101.00ms, mfu 30.00%\n";
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(text, NULL, &st);
    assert_string_equal(st.format, "nanogpt");
    assert_int_equal(mfu_run_count(run), 2);
    mfu_step s = ingest_row(run, 0);
    assert_int_equal(s.step, 6);
    assert_true(isnan(s.mfu));
    assert_true(s.flags & MFU_STEP_MFU_SENTINEL);
    assert_near(ingest_row(run, 1).mfu, 0.30, 1e-12);
    /* counts are per physical line: the bars share the first line with a step, so both lines
     * are used and nothing is ignored (read = used + ignored + skipped) */
    assert_int_equal(st.lines, 2);
    assert_int_equal(st.used, 2);
    assert_int_equal(st.ignored, 0);
    assert_int_equal(st.skipped, 0);
    mfu_run_free(run);
    /* a line of bars only, and a blank line: ignored */
    run = ingest_text(" 5%|5    | 5/100\r 6%|6    | 6/100\n\niter 7: loss 2.4000, time 101.00ms, "
                      "mfu 30.00%\n",
                      "nanogpt", &st);
    assert_int_equal(st.lines, 3);
    assert_int_equal(st.used, 1);
    assert_int_equal(st.ignored, 2);
    mfu_run_free(run);
}

static unsigned char *gzip_bytes(const char *text, size_t n, size_t *out_n, int members)
{
    size_t cap = compressBound((uLong)n) * (size_t)members + 64 * (size_t)members;
    unsigned char *out = malloc(cap);
    size_t used = 0;
    size_t per = n / (size_t)members;
    for (int m = 0; m < members; m++) {
        size_t off = (size_t)m * per, len = m == members - 1 ? n - off : per;
        z_stream z;
        memset(&z, 0, sizeof z);
        assert_int_equal(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
        z.next_in = (unsigned char *)(uintptr_t)(text + off);
        z.avail_in = (uInt)len;
        z.next_out = out + used;
        z.avail_out = (uInt)(cap - used);
        assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
        used = cap - z.avail_out;
        deflateEnd(&z);
    }
    *out_n = used;
    return out;
}

static unsigned char *zstd_bytes(const char *text, size_t n, size_t *out_n)
{
    size_t cap = ZSTD_compressBound(n);
    unsigned char *out = malloc(cap);
    size_t r = ZSTD_compress(out, cap, text, n, 1);
    assert_false(ZSTD_isError(r));
    *out_n = r;
    return out;
}

static void compressed_inputs(void **state)
{
    (void)state;
    char text[4096];
    snprintf(text, sizeof text, "%s\n%s\n", megatron_lines[0], megatron_lines[1]);
    size_t n;
    mfu_run *run;
    mfu_error e;
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    for (int members = 1; members <= 2; members++) { /* concatenated gzip members too */
        unsigned char *gz = gzip_bytes(text, strlen(text), &n, members);
        assert_int_equal(ingest_buffer_opts(gz, n, &o, &run, NULL, &e), MFU_OK);
        assert_int_equal(mfu_run_count(run), 2);
        mfu_run_free(run);
        /* cut short: an I/O error that says so */
        assert_int_equal(ingest_buffer_opts(gz, n - 6, &o, &run, NULL, &e), MFU_E_IO);
        assert_non_null(strstr(e.message, "gzip"));
        free(gz);
    }
    unsigned char *zs = zstd_bytes(text, strlen(text), &n);
    assert_int_equal(ingest_buffer_opts(zs, n, &o, &run, NULL, &e), MFU_OK);
    assert_int_equal(mfu_run_count(run), 2);
    mfu_run_free(run);
    assert_int_equal(ingest_buffer_opts(zs, n - 3, &o, &run, NULL, &e), MFU_E_IO);
    assert_non_null(strstr(e.message, "zstd"));
    zs[n / 2] ^= 0x5a; /* corrupt the middle */
    mfu_status st = ingest_buffer_opts(zs, n, &o, &run, NULL, &e);
    assert_true(st == MFU_E_IO || st == MFU_E_PARSE);
    assert_null(run);
    free(zs);
}

/* A 100 MB line (streamed through zstd, never held whole), then a step line. */
static void line_limit_100mb(void **state)
{
    (void)state;
    ZSTD_CCtx *cc = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 1);
    size_t cap = 4 * 1024 * 1024, used = 0;
    unsigned char *out = malloc(cap);
    char *chunk = malloc(1 << 20);
    memset(chunk, 'x', 1 << 20);
    for (int i = 0; i <= 100; i++) {
        const char *src = chunk;
        size_t len = 1 << 20;
        char tail[2048];
        if (i == 100) {
            snprintf(tail, sizeof tail, "\n%s\n", megatron_lines[0]);
            src = tail;
            len = strlen(tail);
        }
        ZSTD_inBuffer in = {src, len, 0};
        ZSTD_EndDirective end = i == 100 ? ZSTD_e_end : ZSTD_e_continue;
        for (;;) {
            ZSTD_outBuffer ob = {out + used, cap - used, 0};
            size_t r = ZSTD_compressStream2(cc, &ob, &in, end);
            assert_false(ZSTD_isError(r));
            used += ob.pos;
            if (end == ZSTD_e_end ? r == 0 : in.pos == in.size)
                break;
        }
    }
    ZSTD_freeCCtx(cc);
    free(chunk);
    mfu_run *run;
    mfu_error e;
    mfu_ingest_stats st;
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = "megatron";
    assert_int_equal(ingest_buffer_opts(out, used, &o, &run, &st, &e), MFU_OK);
    assert_int_equal(st.too_long, 1);
    assert_int_equal(mfu_run_count(run), 1);
    assert_true(st.peak_line_bytes <= (size_t)MFU_INGEST_MAX_LINE_BYTES);
    assert_int_equal(st.skip_samples[0].line, 1);
    assert_int_equal(st.lines, 2);
    mfu_run_free(run);
    free(out);
}

static void line_limit_small(void **state)
{
    (void)state;
    char text[4096];
    snprintf(text, sizeof text, "%s\nshort line\n%s\n", megatron_lines[0], megatron_lines[1]);
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.max_line_bytes = 100; /* both step lines are longer */
    mfu_run *run;
    mfu_error e;
    mfu_ingest_stats st;
    assert_int_equal(ingest_buffer_opts(text, strlen(text), &o, &run, &st, &e), MFU_E_EMPTY);
    assert_int_equal(st.too_long, 2);
    assert_true(st.peak_line_bytes <= 100);
    o.max_line_bytes = 10;
    assert_int_equal(ingest_buffer_opts(text, strlen(text), &o, &run, &st, &e), MFU_E_INVALID);
}

static void empty_binary_foreign(void **state)
{
    (void)state;
    mfu_error e;
    assert_int_equal(ingest_expect_error("", 0, NULL, &e), MFU_E_EMPTY);
    assert_non_null(strstr(e.message, "--format"));
    assert_int_equal(ingest_expect_error("\n\n  \n", 4, NULL, &e), MFU_E_EMPTY);

    unsigned char bin[4096];
    uint32_t x = 12345;
    for (size_t i = 0; i < sizeof bin; i++) {
        x = x * 1103515245u + 12345u;
        bin[i] = (unsigned char)(x >> 16);
    }
    assert_int_equal(ingest_expect_error((const char *)bin, sizeof bin, NULL, &e), MFU_E_PARSE);
    assert_non_null(strstr(e.message, "binary"));
    for (size_t i = 0; i < sizeof bin; i++) /* no NUL, but mostly control bytes */
        bin[i] = (unsigned char)(1 + i % 8);
    assert_int_equal(ingest_expect_error((const char *)bin, sizeof bin, NULL, &e), MFU_E_PARSE);
    bin[0] = 0x1f; /* gzip magic, garbage after */
    bin[1] = 0x8b;
    assert_int_equal(ingest_expect_error((const char *)bin, sizeof bin, NULL, &e), MFU_E_IO);

    /* another tool's output: a compiler session */
    const char *cc = "gcc -O2 -c main.c -o main.o\n"
                     "main.c: In function 'main':\n"
                     "main.c:12:5: warning: unused variable 'x' [-Wunused-variable]\n"
                     "   12 |     int x;\n"
                     "      |         ^\n"
                     "Linking CXX executable app\n"
                     "[100%] Built target app\n";
    assert_int_equal(ingest_expect_error(cc, strlen(cc), NULL, &e), MFU_E_EMPTY);
    assert_non_null(strstr(e.message, "no known training-log format"));
    /* forced, but none of its lines */
    assert_int_equal(ingest_expect_error(cc, strlen(cc), "nanogpt", &e), MFU_E_EMPTY);
    assert_non_null(strstr(e.message, "nanogpt"));
    /* an unknown format name lists the known ones */
    assert_int_equal(ingest_expect_error(cc, strlen(cc), "nosuch", &e), MFU_E_UNKNOWN);
    assert_non_null(strstr(e.message, "megatron"));
    assert_string_equal(e.field, "--format");
}

static void missing_file_and_session_rules(void **state)
{
    (void)state;
    mfu_run *run = (mfu_run *)1;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_ingest_path("/nonexistent/dir/train.log", NULL, &run, NULL, &e), MFU_E_IO);
    assert_null(run);
    assert_non_null(strstr(e.message, "/nonexistent/dir/train.log"));
    assert_int_equal(mfu_ingest_path(NULL, NULL, &run, NULL, &e), MFU_E_INVALID);
    mfu_ingest *ing = NULL;
    assert_int_equal(mfu_ingest_new(NULL, &ing, &e), MFU_OK);
    /* two inputs form one run */
    char a[2048], b[2048];
    snprintf(a, sizeof a, "%s\n", megatron_lines[0]);
    snprintf(b, sizeof b, "%s\n", megatron_lines[1]);
    assert_int_equal(mfu_ingest_feed_buffer(ing, a, strlen(a), "part1", &e), MFU_OK);
    assert_int_equal(mfu_ingest_feed_buffer(ing, b, strlen(b), "part2", &e), MFU_OK);
    assert_int_equal(mfu_ingest_finish(ing, &run, &e), MFU_OK);
    assert_int_equal(mfu_run_count(run), 2);
    mfu_run_free(run);
    /* a finished session is spent */
    assert_int_equal(mfu_ingest_feed_buffer(ing, a, strlen(a), "again", &e), MFU_E_INVALID);
    mfu_ingest_free(ing);
    mfu_ingest_free(NULL);
    assert_null(mfu_ingest_format_name(1000));
    assert_string_equal(mfu_ingest_format_name(0), "mfu");
}

/* Detection looks past a long preamble of noise. */
static void detection_after_noise(void **state)
{
    (void)state;
    size_t cap = 4 * 1024 * 1024;
    char *text = malloc(cap);
    size_t k = 0;
    for (int i = 0; i < 3000; i++) /* more than MFU_INGEST_DETECT_LINES lines of noise */
        k += (size_t)snprintf(text + k, cap - k, "NCCL INFO Channel %02d : 0[0] -> 1[1] via P2P\n",
                              i % 32);
    k += (size_t)snprintf(text + k, cap - k, "iter 1: loss 9.0000, time 10.00ms, mfu 1.00%%\n");
    k += (size_t)snprintf(text + k, cap - k, "iter 2: loss 8.0000, time 10.00ms, mfu 1.00%%\n");
    mfu_ingest_stats st;
    mfu_run *run = ingest_text(text, NULL, &st);
    assert_string_equal(st.format, "nanogpt");
    assert_int_equal(mfu_run_count(run), 2);
    assert_int_equal(st.lines, 3002);
    mfu_run_free(run);
    free(text);
}

/* ---- the run table ---------------------------------------------------------------------- */

static mfu_step step_n(int64_t n, double loss)
{
    mfu_step s;
    mfu_step_init(&s);
    s.step = n;
    s.loss = loss;
    return s;
}

static void run_dedup_restart_limit(void **state)
{
    (void)state;
    mfu_run *run = mfu_run_new();
    bool merged;
    mfu_error e;
    /* ranks interleaved: 4 4 5 4 5 -> rows 4, 5 */
    int64_t seq[] = {4, 4, 5, 4, 5};
    for (size_t i = 0; i < 5; i++) {
        mfu_step s = step_n(seq[i], (double)i);
        if (i == 2)
            s.grad_norm = 3.0;
        assert_int_equal(mfu_run_append(run, &s, &merged, &e), MFU_OK);
    }
    assert_int_equal(mfu_run_count(run), 2);
    assert_int_equal(mfu_run_get_counts(run).merged, 3);
    assert_near(ingest_row(run, 0).loss, 0, 0); /* the first copy's value is kept */
    assert_near(ingest_row(run, 1).grad_norm, 3.0, 0);
    /* a merge fills what the row lacks */
    mfu_step s = step_n(5, 99);
    s.lr = 0.5;
    assert_int_equal(mfu_run_append(run, &s, &merged, &e), MFU_OK);
    assert_true(merged);
    assert_near(ingest_row(run, 1).lr, 0.5, 0);
    assert_near(ingest_row(run, 1).loss, 2, 0);
    /* a restart (numbers go back) makes new rows, even for numbers seen before */
    int64_t restart[] = {6, 7, 8, 3, 4, 5, 6};
    for (size_t i = 0; i < 7; i++) {
        s = step_n(restart[i], 1);
        assert_int_equal(mfu_run_append(run, &s, &merged, &e), MFU_OK);
        assert_false(merged);
    }
    assert_int_equal(mfu_run_count(run), 9);
    const int64_t *steps = mfu_run_steps(run);
    assert_int_equal(steps[5], 3);
    assert_int_equal(steps[8], 6);
    const double *loss = mfu_run_column(run, MFU_COL_LOSS);
    assert_near(loss[0], 0, 0);
    assert_null(mfu_run_column(run, MFU_COL_COUNT_));
    {
        /* a restart back to a step two rows ago on an unknown rank: new rows, no merge */
        mfu_run *r2 = mfu_run_new();
        int64_t seq2[] = {10, 20, 30, 40, 20, 30};
        for (size_t i = 0; i < 6; i++) {
            mfu_step t = step_n(seq2[i], (double)i);
            assert_int_equal(mfu_run_append(r2, &t, &merged, &e), MFU_OK);
            assert_false(merged);
        }
        assert_int_equal(mfu_run_count(r2), 6);
        /* ranks known: rank 1 lagging two rows behind rank 0 merges; rank 0 going back
         * (its own restart) does not */
        mfu_run *r3 = mfu_run_new();
        int64_t st3[] = {10, 20, 30, 10, 20, 10};
        int32_t rk3[] = {0, 0, 0, 1, 1, 0};
        bool want[] = {false, false, false, true, true, false};
        for (size_t i = 0; i < 6; i++) {
            mfu_step t = step_n(st3[i], (double)i);
            t.rank = rk3[i];
            assert_int_equal(mfu_run_append(r3, &t, &merged, &e), MFU_OK);
            assert_int_equal(merged, want[i]);
        }
        assert_int_equal(mfu_run_count(r3), 4);
        mfu_run_free(r2);
        mfu_run_free(r3);
    }
    /* the row limit: its own error, the run unchanged */
    assert_int_equal(mfu_run_set_max_steps(run, 3, &e), MFU_E_INVALID); /* below rows held */
    assert_int_equal(mfu_run_set_max_steps(run, 10, &e), MFU_OK);
    s = step_n(100, 1);
    assert_int_equal(mfu_run_append(run, &s, &merged, &e), MFU_OK);
    s = step_n(101, 1);
    assert_int_equal(mfu_run_append(run, &s, &merged, &e), MFU_E_LIMIT);
    assert_non_null(strstr(e.message, "MFU_RUN_MAX_STEPS"));
    assert_int_equal(mfu_run_count(run), 10);
    /* a repeat still merges at the limit */
    s = step_n(100, 1);
    assert_int_equal(mfu_run_append(run, &s, &merged, &e), MFU_OK);
    assert_true(merged);
    assert_int_equal(mfu_run_append(NULL, &s, NULL, &e), MFU_E_INVALID);
    assert_int_equal(mfu_run_count(NULL), 0);
    assert_false(mfu_run_get(run, 10, &s));
    assert_string_equal(mfu_scope_name(MFU_SCOPE_DEVICE), "device");
    mfu_run_free(run);
    mfu_run_free(NULL);
}

static void ingest_step_limit(void **state)
{
    (void)state;
    char text[4096] = "";
    for (int i = 1; i <= 5; i++)
        mfu__appendf(text, sizeof text, "iter %d: loss 1.0, time 10.00ms\n", i);
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.max_steps = 3;
    mfu_run *run;
    mfu_error e;
    assert_int_equal(ingest_buffer_opts(text, strlen(text), &o, &run, NULL, &e), MFU_E_LIMIT);
    assert_int_equal(e.line, 4);
    assert_non_null(strstr(e.message, "test:4:"));
    assert_null(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(numbers),
        cmocka_unit_test(datetimes),
        cmocka_unit_test(spans),
        cmocka_unit_test(cleaning),
        cmocka_unit_test(crlf_and_truncated_last_line),
        cmocka_unit_test(carriage_return_redraws),
        cmocka_unit_test(compressed_inputs),
        cmocka_unit_test(line_limit_100mb),
        cmocka_unit_test(line_limit_small),
        cmocka_unit_test(empty_binary_foreign),
        cmocka_unit_test(missing_file_and_session_rules),
        cmocka_unit_test(detection_after_noise),
        cmocka_unit_test(run_dedup_restart_limit),
        cmocka_unit_test(ingest_step_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
