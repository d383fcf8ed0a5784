/*
 * test_ingest_generic.c - the generic JSON-lines and CSV formats with --map, and mfu's own
 * canonical JSON-lines: every fixture written and read back gives the same run, field by
 * field and bit for bit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ingest_test.h"
#include "util/util.h"

static void jsonl_default_and_mapped(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_error e;
    /* known key names need no map; strings with units, NaN from Python, nested keys */
    const char *text =
        "{\"step\": 1, \"loss\": 2.5, \"lr\": \"3e-4\", \"step_time_s\": \"250 ms\", "
        "\"tokens_per_s_device\": 1000, \"mfu\": 0.41, \"time_s\": \"2024-01-01 "
        "00:00:10\"}\n"
        "not json at all\n"
        "{\"step\": 2, \"loss\": NaN, \"memory_bytes\": \"2GiB\", \"rank\": 3}\n"
        "{\"step\": 3, \"loss\": 2.4, \"broken\": }\n"
        "{\"epoch\": 1}\n";
    mfu_run *run = ingest_text_map(text, NULL, NULL, 0, &st, MFU_OK, &e);
    assert_string_equal(st.format, "jsonl");
    assert_int_equal(mfu_run_count(run), 2);
    mfu_step s = ingest_row(run, 0);
    assert_near(s.loss, 2.5, 0);
    assert_near(s.lr, 3e-4, 1e-15);
    assert_near(s.step_time_s, 0.25, 1e-15);
    assert_near(s.tokens_per_s, 1000, 0);
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_DEVICE);
    assert_near(s.mfu, 0.41, 0);
    assert_near(s.time_s, 1704067210.0, 0);
    s = ingest_row(run, 1);
    assert_true(s.flags & MFU_STEP_LOSS_NAN);
    assert_near(s.memory_bytes, 2.0 * 1073741824.0, 0);
    assert_int_equal(s.rank, 3);
    assert_int_equal(st.skipped, 2); /* the broken object and the one without a step */
    assert_int_equal(st.skip_samples[0].line, 4);
    assert_non_null(strstr(st.skip_samples[0].reason, "invalid JSON"));
    assert_non_null(strstr(st.skip_samples[1].reason, "--map step=KEY"));
    assert_int_equal(st.ignored, 1);
    mfu_run_free(run);

    /* user keys, a factor, a dotted path */
    static const char *const map[] = {"step=it,step_time_s=timing.dt_ms*0.001",
                                      "tokens_per_s=perf.tps"};
    run = ingest_text_map("{\"it\": 7, \"timing\": {\"dt_ms\": 420}, \"perf\": {\"tps\": 9e4}}\n",
                          "jsonl", map, 2, &st, MFU_OK, &e);
    s = ingest_row(run, 0);
    assert_int_equal(s.step, 7);
    assert_near(s.step_time_s, 0.42, 1e-15);
    assert_near(s.tokens_per_s, 9e4, 0);
    assert_int_equal(s.tokens_per_s_scope, MFU_SCOPE_GLOBAL);
    mfu_run_free(run);
}

static void jsonl_errors(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_error e;
    /* no object has a step: MFU_E_MISSING naming the keys and the fix */
    mfu_run *run = ingest_text_map("{\"it\": 1, \"loss\": 2}\n{\"it\": 2, \"loss\": 1}\n", NULL,
                                   NULL, 0, &st, MFU_E_MISSING, &e);
    assert_null(run);
    assert_non_null(strstr(e.message, "--map step=KEY"));
    assert_non_null(strstr(e.message, "it, loss"));
    static const char *const bad1[] = {"speed=tps"};
    ingest_text_map("{\"step\": 1}\n", "jsonl", bad1, 1, &st, MFU_E_INVALID, &e);
    assert_non_null(strstr(e.message, "unknown field 'speed'"));
    assert_non_null(strstr(e.message, "step_time_s"));
    assert_string_equal(e.field, "--map");
    static const char *const bad2[] = {"step"};
    ingest_text_map("{\"step\": 1}\n", "jsonl", bad2, 1, &st, MFU_E_INVALID, &e);
    assert_non_null(strstr(e.message, "FIELD=COLUMN"));
    static const char *const bad3[] = {"step_time_s=dt*abc"};
    ingest_text_map("{\"step\": 1}\n", "jsonl", bad3, 1, &st, MFU_E_INVALID, &e);
    assert_non_null(strstr(e.message, "factor"));
    /* a step that is not an integer is not a step */
    run = ingest_text_map("{\"step\": 1.5}\n{\"step\": 2}\n", "jsonl", NULL, 0, &st, MFU_OK, &e);
    assert_int_equal(mfu_run_count(run), 1);
    mfu_run_free(run);
}

static void csv_with_map(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_error e;
    static const char *const map[] = {"step=iter", "step_time_s=dt_ms*0.001,mfu=mfu_pct*0.01"};
    const char *text = "iter,loss,dt_ms,mfu_pct,note\r\n"
                       "1,2.50,400,41.5,\"warm, up\"\r\n"
                       "2,2.40,410,,\"say \"\"hi\"\"\"\r\n"
                       "3,2.30\r\n"
                       "4,nan,405,42.0,x\r\n"
                       ",2.2,405,42.0,x\r\n"
                       "4,,,,val\r\n";
    mfu_run *run = ingest_text_map(text, NULL, map, 2, &st, MFU_OK, &e);
    assert_string_equal(st.format, "csv");
    assert_int_equal(mfu_run_count(run), 3);
    mfu_step s = ingest_row(run, 0);
    assert_near(s.loss, 2.5, 0);
    assert_near(s.step_time_s, 0.4, 1e-15);
    assert_near(s.mfu, 0.415, 1e-15);
    s = ingest_row(run, 1);
    assert_true(isnan(s.mfu)); /* empty cell = absent */
    s = ingest_row(run, 2);
    assert_int_equal(s.step, 4);
    assert_true(s.flags & MFU_STEP_LOSS_NAN);
    assert_int_equal(st.skipped, 2); /* the short row, the row without a step */
    assert_non_null(strstr(st.skip_samples[0].reason, "2 cells, the header has 5"));
    assert_int_equal(st.skip_samples[0].line, 4);
    assert_int_equal(st.merged, 1); /* Lightning-style second row of step 4 */
    mfu_run_free(run);

    /* TSV, column names as the fields' own */
    run = ingest_text_map("step\tloss\tstep_time_s\n10\t1.5\t0.5\n20\t1.4\t0.6\n", "csv", NULL, 0,
                          &st, MFU_OK, &e);
    assert_int_equal(mfu_run_count(run), 2);
    assert_near(ingest_row(run, 1).step_time_s, 0.6, 0);
    mfu_run_free(run);

    /* no step column: MFU_E_MISSING with the header and the fix */
    run = ingest_text_map("a,b,c\n1,2,3\n", NULL, NULL, 0, &st, MFU_E_MISSING, &e);
    assert_non_null(strstr(e.message, "a,b,c"));
    assert_non_null(strstr(e.message, "--map step=COLUMN"));
    static const char *const badcol[] = {"step=a,loss=nosuch"};
    run = ingest_text_map("a,b,c\n1,2,3\n", "csv", badcol, 1, &st, MFU_E_MISSING, &e);
    assert_non_null(strstr(e.message, "nosuch"));
}

/* Write a run as canonical JSON-lines into memory. */
static char *write_canonical(const mfu_run *run, size_t *n)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, n);
    assert_non_null(f);
    mfu_error e;
    assert_int_equal(mfu_run_write_jsonl(run, f, &e), MFU_OK);
    fclose(f);
    return buf;
}

static bool same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || memcmp(&a, &b, sizeof a) == 0;
}

static void assert_same_run(const mfu_run *a, const mfu_run *b)
{
    assert_int_equal(mfu_run_count(a), mfu_run_count(b));
    for (size_t i = 0; i < mfu_run_count(a); i++) {
        mfu_step x = ingest_row(a, i), y = ingest_row(b, i);
        assert_int_equal(x.step, y.step);
        assert_int_equal(x.flags, y.flags);
        assert_int_equal(x.rank, y.rank);
        assert_int_equal(x.tokens_per_s_scope, y.tokens_per_s_scope);
        assert_int_equal(x.flops_per_s_scope, y.flops_per_s_scope);
        assert_int_equal(x.mfu_scope, y.mfu_scope);
        assert_int_equal(x.samples_per_s_scope, y.samples_per_s_scope);
        for (int c = 0; c < MFU_COL_COUNT_; c++)
            if (!same_double(run_cell(a, (mfu_column)c, i), run_cell(b, (mfu_column)c, i)))
                fail_msg("row %zu column %d: %.17g vs %.17g", i, c, run_cell(a, (mfu_column)c, i),
                         run_cell(b, (mfu_column)c, i));
    }
    const mfu_run_meta *m = mfu_run_meta_get(a), *n = mfu_run_meta_get(b);
    assert_string_equal(m->format, n->format);
    assert_string_equal(m->model, n->model);
    assert_string_equal(m->convention, n->convention);
    assert_string_equal(m->device, n->device);
    assert_string_equal(m->dtype, n->dtype);
    assert_int_equal(m->global_batch, n->global_batch);
    assert_int_equal(m->micro_batch, n->micro_batch);
    assert_int_equal(m->seq_len, n->seq_len);
    assert_int_equal(m->world_size, n->world_size);
    assert_int_equal(m->grad_accum, n->grad_accum);
    assert_true(same_double(m->model_params, n->model_params));
    assert_true(same_double(m->tokens_per_step, n->tokens_per_step));
    assert_true(same_double(m->reported_peak_flops_per_s, n->reported_peak_flops_per_s));
}

static void canonical_round_trip_fixtures(void **state)
{
    (void)state;
    static const char *const fx[] = {
        "logs/megatron-lm/epfllm-megatron-llm-issue11-a.log",
        "logs/megatron-lm/fixstars-mdk-gpt3-7b-fp8-2node.log",
        "logs/megatron-lm/megatron-issue756-mixtral-8x7b-16xh100-a.log",
        "logs/megatron-lm/nccl-issue743-megatron-bert-2022-timers.log",
        "logs/nanogpt/nanogpt-issue110-gpt2-124m-8xa100-preMFU.log",
        "logs/nanogpt/nanogpt-issue215-v100-fp16-nan.log",
        "logs/llm.c/llmc-discussion677-gpt2-1558m-8xh100.log",
        "logs/llm.c/llmc-issue796-blackwell-unknown-mfu.log",
        "logs/torchtitan/torchtitan-pr1287-llama3-8b-h100-gc-profiler.log",
        "logs/torchtitan/torchtitan-pr2389-moe-b200-8rank-noprefix.log",
        "logs/nemo/nemo-automodel-pr3473-tps.log",
        "logs/nemo/nemo2-bionemo-pr740-progress-printer.log",
    };
    for (size_t i = 0; i < sizeof fx / sizeof fx[0]; i++) {
        mfu_run *a = ingest_fixture(fx[i], NULL, NULL);
        size_t n;
        char *text = write_canonical(a, &n);
        mfu_ingest_stats st;
        mfu_run *b = ingest_text(text, NULL, &st);
        assert_string_equal(st.format, "mfu");
        assert_int_equal(st.skipped, 0);
        assert_int_equal(st.ignored, 0);
        assert_same_run(a, b);
        /* and the second generation is byte-identical */
        size_t n2;
        char *text2 = write_canonical(b, &n2);
        assert_int_equal(n, n2);
        assert_memory_equal(text, text2, n);
        free(text);
        free(text2);
        mfu_run_free(a);
        mfu_run_free(b);
    }
}

static void canonical_spec(void **state)
{
    (void)state;
    /* a hand-built run: every field, awkward doubles, a string that needs escaping */
    mfu_run *run = mfu_run_new();
    mfu_run_meta *m = mfu_run_meta_mut(run);
    mfu__strlcpy(m->format, "megatron", sizeof m->format);
    mfu__strlcpy(m->model, "GPT \"7B\"\tclass", sizeof m->model);
    m->seq_len = 4096;
    m->model_params = 6.44e9;
    mfu_step s;
    mfu_step_init(&s);
    s.step = 10;
    s.step_time_s = 0.1 + 0.2; /* 0.30000000000000004 */
    s.loss = 1.0 / 3.0;
    s.flops_per_s = 7.483e14;
    s.flops_per_s_scope = MFU_SCOPE_DEVICE;
    s.mfu = 0.3429;
    s.mfu_scope = MFU_SCOPE_DEVICE;
    s.samples_per_s = 512;
    s.samples_per_s_scope = MFU_SCOPE_GLOBAL;
    s.flags = MFU_STEP_SKIPPED | MFU_STEP_LOSS_NAN;
    s.rank = 3;
    s.loss = NAN;
    assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    size_t n;
    char *text = write_canonical(run, &n);
    const char *nl = strchr(text, '\n');
    assert_non_null(nl);
    /* the header comes first with the version; absent values are left out */
    assert_true(
        strncmp(text,
                "{\"mfu_run\":1,\"format\":\"megatron\",\"model\":\"GPT \\\"7B\\\"\\u0009class\"",
                60) == 0);
    assert_null(strstr(text, "world_size"));
    assert_non_null(strstr(text, "\"step_time_s\":0.30000000000000004"));
    assert_non_null(
        strstr(text, "\"flops_per_s\":748300000000000,\"flops_per_s_scope\":\"device\""));
    assert_non_null(strstr(text, "\"skipped\":true,\"loss_nan\":true"));
    assert_null(strstr(text, "\"loss\":"));    /* nan loss: no value, the flag */
    assert_null(strstr(text, "tokens_per_s")); /* absent */
    mfu_run *b = ingest_text(text, "mfu", NULL);
    assert_same_run(run, b);
    free(text);
    mfu_run_free(b);
    mfu_run_free(run);

    /* version and type checks */
    mfu_error e;
    const char *v2 = "{\"mfu_run\":2}\n{\"step\":1}\n";
    assert_int_equal(ingest_expect_error(v2, strlen(v2), NULL, &e), MFU_E_UNSUPPORTED);
    assert_non_null(strstr(e.message, "version 2"));
    assert_int_equal(e.line, 1);
    const char *badtype = "{\"mfu_run\":1}\n{\"step\":1,\"loss\":\"x\"}\n{\"step\":2,\"loss\":1}\n";
    mfu_ingest_stats st;
    run = ingest_text(badtype, NULL, &st);
    assert_int_equal(mfu_run_count(run), 1);
    assert_int_equal(st.skipped, 1);
    mfu_run_free(run);
    assert_int_equal(mfu_run_write_jsonl(NULL, stdout, &e), MFU_E_INVALID);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(jsonl_default_and_mapped),
        cmocka_unit_test(jsonl_errors),
        cmocka_unit_test(csv_with_map),
        cmocka_unit_test(canonical_round_trip_fixtures),
        cmocka_unit_test(canonical_spec),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
