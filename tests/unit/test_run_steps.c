/*
 * test_run_steps.c - the per-step configuration and telemetry fields of a run (seq_len,
 * devices, useful tokens, clock, power, timers, recompute, dtype) and the per-rank
 * observations: stored, merged, written to canonical JSON-lines and read back unchanged; the
 * Megatron timers and power that fill them from real log lines; tokens from a per-step
 * sequence length.
 */
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
#include "mfu/report.h"
#include "mfu/analysis.h"
#include "mfu/device.h"
#include "util/util.h"
#include "mfu/model.h"

static char *write_canonical(const mfu_run *run)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    assert_non_null(f);
    mfu_error e;
    assert_int_equal(mfu_run_write_jsonl(run, f, &e), MFU_OK);
    fclose(f);
    return buf;
}

static mfu_step full_step(int64_t step, int32_t rank)
{
    mfu_step s;
    mfu_step_init(&s);
    s.step = step;
    s.rank = rank;
    s.step_time_s = 1.25 + 0.001 * (double)step;
    s.tokens = 4096.0 * 64;
    s.seq_len = step < 3 ? 4096 : 1024;
    s.devices = 64;
    s.useful_tokens = 4096.0 * 60;
    s.clock_mhz = 1980 - (double)step;
    s.power_w = 690.5;
    s.power_limit_w = 700;
    s.data_loading_s = 0.0125;
    s.comm_s = 0.1 / 3.0;
    s.optimizer_s = 0.02;
    s.recompute = step < 3 ? MFU_RECOMPUTE_FULL : MFU_RECOMPUTE_NONE;
    s.dtype = MFU_DTYPE_BF16;
    return s;
}

static void init_is_absent(void **state)
{
    (void)state;
    mfu_step s;
    mfu_step_init(&s);
    assert_true(isnan(s.seq_len) && isnan(s.devices) && isnan(s.useful_tokens));
    assert_true(isnan(s.clock_mhz) && isnan(s.power_w) && isnan(s.power_limit_w));
    assert_true(isnan(s.data_loading_s) && isnan(s.comm_s) && isnan(s.optimizer_s));
    assert_int_equal(s.recompute, -1);
    assert_int_equal(s.dtype, -1);
}

/* Every new field is stored, returned and exposed as a column; a merge fills what is absent. */
static void store_and_merge(void **state)
{
    (void)state;
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    mfu_step a = full_step(1, 0);
    assert_int_equal(mfu_run_append(run, &a, NULL, NULL), MFU_OK);
    mfu_step b;
    mfu_step_init(&b);
    b.step = 2;
    b.step_time_s = 1.0;
    assert_int_equal(mfu_run_append(run, &b, NULL, NULL), MFU_OK);
    mfu_step fill = full_step(2, -1);
    fill.clock_mhz = 1500;
    bool merged = false;
    assert_int_equal(mfu_run_append(run, &fill, &merged, NULL), MFU_OK);
    assert_true(merged);
    mfu_step got = ingest_row(run, 0);
    assert_near(got.seq_len, 4096, 0);
    assert_near(got.comm_s, 0.1 / 3.0, 0);
    assert_int_equal(got.recompute, MFU_RECOMPUTE_FULL);
    assert_int_equal(got.dtype, MFU_DTYPE_BF16);
    got = ingest_row(run, 1);
    assert_near(got.step_time_s, 1.0, 0); /* the first copy's value wins */
    assert_near(got.clock_mhz, 1500, 0);  /* an absent one is filled */
    assert_int_equal(got.recompute, MFU_RECOMPUTE_FULL);
    assert_near(mfu_run_column(run, MFU_COL_POWER_LIMIT_W)[1], 700, 0);
    assert_near(mfu_run_column(run, MFU_COL_USEFUL_TOKENS)[0], 4096.0 * 60, 0);
    assert_null(mfu_run_column(run, MFU_COL_COUNT_));
    /* codes outside a small range are unknown */
    mfu_step c = full_step(3, 0);
    c.recompute = 1000;
    assert_int_equal(mfu_run_append(run, &c, NULL, NULL), MFU_OK);
    assert_int_equal(ingest_row(run, 2).recompute, -1);
    mfu_run_free(run);
}

/* Two ranks print the same steps: one row each, and the second rank's own figures are kept. */
static void rank_observations(void **state)
{
    (void)state;
    mfu_run *run = mfu_run_new();
    for (int64_t st = 1; st <= 3; st++)
        for (int32_t r = 0; r < 3; r++) {
            mfu_step s;
            mfu_step_init(&s);
            s.step = st;
            s.rank = r;
            s.step_time_s = 1.0 + 0.5 * (r == 2);
            assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
        }
    assert_int_equal(mfu_run_count(run), 3);
    assert_int_equal(mfu_run_rank_obs_count(run), 6);
    mfu_rank_obs o;
    assert_true(mfu_run_rank_obs_get(run, 1, &o));
    assert_int_equal(o.row, 0);
    assert_int_equal(o.step, 1);
    assert_int_equal(o.rank, 2);
    assert_near(o.step_time_s, 1.5, 0);
    assert_true(isnan(o.tokens_per_s));
    assert_false(mfu_run_rank_obs_get(run, 6, &o));
    assert_int_equal(mfu_run_get_counts(run).rank_obs, 6);
    /* the same rank again, or an unknown rank, is no observation */
    mfu_step s;
    mfu_step_init(&s);
    s.step = 3;
    s.rank = 0;
    s.step_time_s = 9;
    assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    s.rank = -1;
    assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
    assert_int_equal(mfu_run_rank_obs_count(run), 6);
    /* direct appends: the row must exist, the rank be known */
    mfu_rank_obs d = {1, 999, 7, 2.5, NAN};
    assert_int_equal(mfu_run_rank_obs_append(run, &d, NULL), MFU_OK);
    assert_true(mfu_run_rank_obs_get(run, 6, &o));
    assert_int_equal(o.step, 2); /* taken from the row */
    d.row = 3;
    mfu_error e;
    assert_int_equal(mfu_run_rank_obs_append(run, &d, &e), MFU_E_INVALID);
    d.row = 0;
    d.rank = -1;
    assert_int_equal(mfu_run_rank_obs_append(run, &d, &e), MFU_E_INVALID);
    assert_int_equal(mfu_run_rank_obs_append(NULL, &d, &e), MFU_E_INVALID);
    assert_int_equal(mfu_run_rank_obs_count(NULL), 0);
    mfu_run_free(run);
}

/* Canonical JSON-lines keep every new field and the observations, byte for byte. */
static void canonical_round_trip(void **state)
{
    (void)state;
    mfu_run *run = mfu_run_new();
    mfu__strlcpy(mfu_run_meta_mut(run)->format, "megatron", sizeof mfu_run_meta_mut(run)->format);
    for (int64_t st = 1; st <= 5; st++) {
        mfu_step s = full_step(st, 0);
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
        mfu_step r1;
        mfu_step_init(&r1);
        r1.step = st;
        r1.rank = 1;
        r1.step_time_s = 1.5;
        assert_int_equal(mfu_run_append(run, &r1, NULL, NULL), MFU_OK);
    }
    /* a lagging rank: its observation of step 2 arrives after step 5 */
    mfu_step late;
    mfu_step_init(&late);
    late.step = 2;
    late.rank = 2;
    late.step_time_s = 1.75;
    late.tokens_per_s = 1234.5;
    assert_int_equal(mfu_run_append(run, &late, NULL, NULL), MFU_OK);
    assert_int_equal(mfu_run_rank_obs_count(run), 6);

    char *text = write_canonical(run);
    assert_non_null(strstr(text, "\"seq_len\":1024"));
    assert_non_null(strstr(text, "\"recompute\":\"full\""));
    assert_non_null(strstr(text, "\"dtype\":\"bf16\""));
    assert_non_null(strstr(text, "{\"step\":2,\"rank\":2,\"rank_obs\":true,\"step_time_s\":1.75"));
    mfu_ingest_stats st;
    mfu_run *back = ingest_text(text, NULL, &st);
    assert_string_equal(st.format, "mfu");
    assert_int_equal(st.skipped, 0);
    assert_int_equal(mfu_run_count(back), 5);
    for (size_t i = 0; i < 5; i++) {
        mfu_step x = ingest_row(run, i), y = ingest_row(back, i);
        assert_int_equal(x.recompute, y.recompute);
        assert_int_equal(x.dtype, y.dtype);
        assert_int_equal(x.rank, y.rank);
        for (int c = 0; c < MFU_COL_COUNT_; c++) {
            double u = run_cell(run, (mfu_column)c, i);
            double v = run_cell(back, (mfu_column)c, i);
            assert_true((isnan(u) && isnan(v)) || u == v);
        }
    }
    assert_int_equal(mfu_run_rank_obs_count(back), 6);
    for (size_t k = 0; k < 6; k++) {
        mfu_rank_obs a, b;
        /* grouped by row on the way out: compare as sets (row, rank) */
        assert_true(mfu_run_rank_obs_get(run, k, &a));
        bool found = false;
        for (size_t q = 0; q < 6 && !found; q++) {
            assert_true(mfu_run_rank_obs_get(back, q, &b));
            found = a.row == b.row && a.rank == b.rank && a.step == b.step &&
                    a.step_time_s == b.step_time_s &&
                    ((isnan(a.tokens_per_s) && isnan(b.tokens_per_s)) ||
                     a.tokens_per_s == b.tokens_per_s);
        }
        assert_true(found);
    }
    char *again = write_canonical(back);
    assert_string_equal(text, again);
    free(again);
    free(text);
    mfu_run_free(back);
    mfu_run_free(run);
}

/* Bad values of the new keys skip the line with a reason; an observation must follow its row. */
static void canonical_bad_values(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_text("{\"mfu_run\":1}\n"
                               "{\"step\":1,\"step_time_s\":1,\"recompute\":\"sometimes\"}\n"
                               "{\"step\":2,\"step_time_s\":1,\"clock_mhz\":\"fast\"}\n"
                               "{\"step\":3,\"step_time_s\":1,\"rank\":0}\n"
                               "{\"step\":2,\"rank\":1,\"rank_obs\":true,\"step_time_s\":2}\n"
                               "{\"step\":3,\"rank_obs\":true,\"step_time_s\":2}\n"
                               "{\"step\":3,\"rank\":1,\"rank_obs\":true,\"step_time_s\":2}\n",
                               NULL, &st);
    assert_int_equal(mfu_run_count(run), 1);
    assert_int_equal(st.skipped, 4);
    assert_int_equal(mfu_run_rank_obs_count(run), 1);
    mfu_run_free(run);
}

/* Megatron: the 2022 timer line and the 2023+ block attach to the iteration before them; power
 * per GPU and Megatron-DeepSpeed's actual seqlen are per-step fields. */
static void megatron_timers_power_seqlen(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run =
        ingest_fixture("logs/megatron-lm/nccl-issue743-megatron-bert-2022-timers.log", NULL, &st);
    mfu_step s = ingest_row(run, 0);
    assert_near(s.data_loading_s, 0.02527, 1e-15); /* batch-generator: 25.27 ms */
    assert_near(s.optimizer_s, 0.06301, 1e-15);    /* optimizer: 63.01 */
    assert_near(s.comm_s, 0.02022, 1e-15);         /* backward-reduce-model-grads: 20.22 */
    mfu_run_free(run);

    const char *log =
        " iteration       10/    1000 | consumed samples:        10240 | elapsed time per "
        "iteration (ms): 2000.0 | global batch size:  1024 | lm loss: 5.000000E+00 | actual "
        "seqlen:  2048 | power per GPU (W/GPU): 612.5 |\n"
        "(min, max) time across ranks (ms):\n"
        "    forward-backward ...............................: (1800.00, 1810.00)\n"
        "    batch-generator ................................: (10.00, 40.00)\n"
        "    all-grads-sync .................................: (55.50, 60.25)\n"
        "    optimizer ......................................: (20.00, 21.00)\n"
        " iteration       20/    1000 | consumed samples:        20480 | elapsed time per "
        "iteration (ms): 2000.0 | global batch size:  1024 | lm loss: 5.000000E+00 |\n";
    run = ingest_text(log, NULL, &st);
    assert_int_equal(mfu_run_count(run), 2);
    s = ingest_row(run, 0);
    assert_near(s.seq_len, 2048, 0);
    assert_near(s.tokens, 1024.0 * 2048, 0);
    assert_near(s.power_w, 612.5, 0);
    assert_near(s.data_loading_s, 0.040, 1e-15); /* the max across ranks */
    assert_near(s.comm_s, 0.06025, 1e-15);
    assert_near(s.optimizer_s, 0.021, 1e-15);
    s = ingest_row(run, 1);
    assert_true(isnan(s.data_loading_s));
    assert_true(isnan(s.seq_len));
    assert_int_equal(st.skipped, 0);
    assert_int_equal(st.ignored, 0);
    mfu_run_free(run);
}

/* The generic jsonl reader takes the new fields by name; tokens are not derived from a
 * step's own sequence length (ingest keeps its rules for existing fields: the report does). */
static void jsonl_reads_step_fields(void **state)
{
    (void)state;
    mfu_ingest_stats st;
    mfu_run *run = ingest_text("{\"step\":1,\"samples\":8,\"seq_len\":512,\"step_time_s\":1,"
                               "\"devices\":16,\"clock_mhz\":1755,\"comm_s\":0.25}\n"
                               "{\"step\":2,\"samples\":8,\"step_time_s\":1}\n",
                               "jsonl", &st);
    assert_int_equal(mfu_run_count(run), 2);
    mfu_step s = ingest_row(run, 0);
    assert_near(s.seq_len, 512, 0);
    assert_near(s.devices, 16, 0);
    assert_near(s.clock_mhz, 1755, 0);
    assert_near(s.comm_s, 0.25, 0);
    assert_true(isnan(s.tokens));
    assert_true(isnan(ingest_row(run, 1).seq_len));
    mfu_run_free(run);
}

/* The report's analysis sees a step's own devices, sequence length, useful tokens and
 * telemetry (the figures module's per-step rule), the run's where the step gives none. */
static void analysis_sees_per_step_fields(void **state)
{
    (void)state;
    mfu_run *run = mfu_run_new();
    mfu_run_meta_mut(run)->seq_len = 4096;
    mfu_step a = full_step(1, -1), b;
    mfu_step_init(&b);
    b.step = 2;
    b.tokens_per_s = 100;
    b.tokens_per_s_scope = MFU_SCOPE_DEVICE;
    assert_int_equal(mfu_run_append(run, &a, NULL, NULL), MFU_OK);
    assert_int_equal(mfu_run_append(run, &b, NULL, NULL), MFU_OK);
    mfu_report_input in;
    memset(&in, 0, sizeof in);
    in.devices = 8;
    in.tokens_per_step = 4096.0 * 80;
    mfu_report *r = NULL;
    assert_int_equal(mfu_report_compute(run, &in, &r, NULL), MFU_OK);
    const mfu_analysis *an = mfu_report_analysis(r);
    assert_non_null(an);
    const double *dev = mfu_analysis_input(an, MFU_SC_DEVICES);
    const double *seq = mfu_analysis_input(an, MFU_SC_SEQ_LEN);
    const double *clk = mfu_analysis_input(an, MFU_SC_CLOCK_MHZ);
    const double *lim = mfu_analysis_input(an, MFU_SC_POWER_LIMIT_W);
    const double *comm = mfu_analysis_input(an, MFU_SC_COMM_S);
    const double *tps = mfu_analysis_input(an, MFU_SC_TOKENS_PER_S);
    assert_near(dev[0], 64, 0);   /* the step's */
    assert_near(seq[0], 4096, 0); /* full_step(1) prints 4096 too */
    assert_near(clk[0], 1979, 0);
    assert_near(lim[0], 700, 0);
    assert_near(comm[0], 0.1 / 3.0, 0);
    assert_near(dev[1], 8, 0); /* the run's */
    assert_near(tps[1], 800, 0);
    assert_true(isnan(clk[1]));
    mfu_report_free(r);
    mfu_run_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(init_is_absent),          cmocka_unit_test(store_and_merge),
        cmocka_unit_test(rank_observations),       cmocka_unit_test(canonical_round_trip),
        cmocka_unit_test(canonical_bad_values),    cmocka_unit_test(megatron_timers_power_seqlen),
        cmocka_unit_test(jsonl_reads_step_fields), cmocka_unit_test(analysis_sees_per_step_fields),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
