/*
 * test_report_consume.c - mfu__report_compute_consume (what `mfu report` uses: the run's columns
 * are freed before the analysis) gives the report mfu_report_compute gives, to the byte, on a
 * run that has what the report reads of the run after its figures: per-rank observations,
 * flags (a nan loss, a skipped step, an MFU sentinel), sample counts, telemetry and energy
 * columns, timestamps; and the run it leaves reads absent but its steps, and takes no append.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/json.h"
#include "mfu/mfu.h"
#include "report/report.h"
#include "run/step.h"
#include "util/pages.h"

#define N 3000

/* A run of N steps with everything the report reads of the rows; rank 1 prints every 10th step
 * again, slower (a per-rank observation). */
static mfu_run *rich_run(void)
{
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    mfu_run_meta_mut(run)->seq_len = 2048;
    for (int i = 1; i <= N; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = i;
        s.time_s = 1.7e9 + 1.3 * i;
        s.step_time_s = (i > 2000 ? 1.45 : 1.3) + 0.01 * (i % 7);
        if (i <= 5)
            s.step_time_s *= 2; /* a warm-up: rows that are not steady */
        s.tokens = 2048 * 64;
        s.loss = 3.0 - 1e-4 * i;
        s.samples = 64;
        s.clock_mhz = i > 2500 ? 1400 : 1980;
        s.power_w = 640 + (i % 5);
        s.energy_j = s.power_w * s.step_time_s;
        s.tensor_active = 0.4;
        s.comm_s = 0.1;
        s.lr = 3e-4 * (1 - 1e-5 * i); /* columns no reader of the report reads: the consumed */
        s.grad_norm = 0.5 + 0.01 * (i % 11); /* run frees them first (report.c, unread[]) */
        s.memory_bytes = 7.1e10;
        s.rank = 0;
        if (i == 700)
            s.flags |= MFU_STEP_LOSS_NAN;
        if (i == 900)
            s.flags |= MFU_STEP_SKIPPED;
        if (i == 3)
            s.flags |= MFU_STEP_MFU_SENTINEL;
        assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
        if (i % 10 == 0) {
            s.rank = 1;
            s.step_time_s *= 1.2;
            bool merged = false;
            assert_int_equal(mfu_run_append(run, &s, &merged, NULL), MFU_OK);
            assert_true(merged);
        }
    }
    assert_true(mfu_run_rank_obs_count(run) > 0);
    return run;
}

/* Everything a report says that the CLI prints: its CSV series, notes, missing inputs,
 * comparisons, summaries, energy and the analysis, as one string (free it). */
static char *report_text(const mfu_report *r)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(mfu_report_write_csv(r, "run", true, f, NULL), MFU_OK);
    for (size_t i = 0; i < mfu_report_note_count(r); i++)
        fprintf(f, "note %s\n", mfu_report_note_at(r, i));
    for (size_t i = 0; i < mfu_report_missing_count(r); i++)
        fprintf(f, "missing %s\n", mfu_report_missing_at(r, i)->what);
    for (size_t i = 0; i < mfu_report_comparison_count(r); i++)
        fprintf(f, "comparison %s\n", mfu_report_comparison_at(r, i)->explanation);
    for (int k = 0; k < MFU_RS_COUNT_; k++) {
        mfu_report_stat s = mfu_report_summary(r, (mfu_report_series)k);
        fprintf(f, "stat %d %.17g %.17g %.17g %.17g %zu\n", k, s.median, s.mean, s.p10, s.p90, s.n);
    }
    const mfu_energy *e = mfu_report_get_energy(r);
    assert_non_null(e);
    fprintf(f, "energy %zu %zu %.17g %.17g %.17g %.17g %.17g %zu %.17g %.17g %d %s\n", e->steps,
            e->power_steps, e->joules, e->useful_pflop, e->joules_per_pflop, e->tokens,
            e->tokens_per_kwh, e->tensor_steps, e->tensor_active, e->mfu, (int)e->check,
            e->check_text);
    const mfu_report_warmup *w = mfu_report_get_warmup(r);
    fprintf(f, "warmup %zu %zu %zu\n", w->steps, w->steady, w->settle);
    json_t *j = mfu__analysis_json(mfu_report_analysis(r));
    assert_non_null(j);
    assert_int_equal(json_dumpf(j, f, JSON_SORT_KEYS), 0);
    json_decref(j);
    long len = ftell(f);
    assert_true(len > 0);
    rewind(f);
    char *buf = malloc((size_t)len + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)len, f), (size_t)len);
    buf[len] = 0;
    fclose(f);
    return buf;
}

static void consume_reports_alike(void **state)
{
    (void)state;
    mfu_report_input in;
    memset(&in, 0, sizeof in);
    in.devices = 8;
    in.global_batch = 64;
    in.has_arch = true;
    assert_int_equal(mfu_preset_find("llama3-8b", &in.arch, NULL), MFU_OK);
    in.device = "h100-sxm";
    in.micro_batch = 2; /* the roofline finding too */
    mfu_run *a = rich_run(), *b = rich_run();
    mfu_report *ra = NULL, *rb = NULL;
    mfu_error e;
    memset(&e, 0, sizeof e);
    assert_int_equal(mfu_report_compute(a, &in, &ra, &e), MFU_OK);
    assert_int_equal(mfu__report_compute_consume(b, &in, &rb, &e), MFU_OK);
    char *ta = report_text(ra), *tb = report_text(rb);
    assert_string_equal(ta, tb);
    /* the run's figures made it through: the notes of the flags, a shift, the energy */
    assert_non_null(strstr(ta, "sentinel on 1 step"));
    assert_non_null(strstr(ta, "nan on 1 step"));
    assert_non_null(strstr(ta, "skipped"));
    assert_true(mfu_analysis_segment_count(mfu_report_analysis(rb)) >= 2);
    /* the summaries count the analysis's steady rows (report.c): they are the report's steady
     * steps, row for row */
    size_t nsteady = 0;
    for (size_t i = 0; i < mfu_report_step_count(rb); i++) {
        bool st = mfu_report_step_state_at(rb, i) == MFU_STEP_STEADY;
        assert_true(st == mfu_analysis_is_steady(mfu_report_analysis(rb), i));
        nsteady += st;
    }
    assert_true(nsteady > 0 && nsteady < mfu_report_step_count(rb)); /* warm-up, nan, skipped */
    assert_true(isfinite(mfu_report_get_energy(rb)->tokens_per_kwh));
    assert_true(mfu_report_get_energy(rb)->tensor_steps > 0);
    free(ta);
    free(tb);

    /* what the consumed run is afterwards: empty (its step numbers are the report's, the
     * columns the figures read theirs), its per-rank observations kept, appends refused */
    assert_int_equal(mfu_run_count(b), 0);
    assert_null(mfu_run_steps(b));
    assert_null(mfu_run_column(b, MFU_COL_LOSS));
    assert_null(mfu__run_flags(b));
    assert_true(mfu_run_rank_obs_count(b) > 0);
    mfu_step s;
    mfu_step_init(&s);
    s.step = N + 1;
    s.step_time_s = 1;
    assert_int_not_equal(mfu_run_append(b, &s, NULL, &e), MFU_OK);
    assert_int_equal(mfu_run_count(b), 0);

    /* a run whose columns are dropped: the step numbers stay, every append is refused */
    mfu_run *c = rich_run();
    mfu__run_drop_columns(c);
    assert_int_equal(mfu_run_count(c), N);
    assert_int_equal(mfu_run_steps(c)[N - 1], N);
    assert_null(mfu_run_column(c, MFU_COL_LOSS));
    assert_null(mfu__run_flags(c));
    assert_true(mfu_run_get(c, 10, &s));
    assert_true(isnan(s.step_time_s) && s.step == 11 && s.rank == -1);
    mfu_step_init(&s);
    s.step = N + 1;
    s.step_time_s = 1;
    assert_int_equal(mfu_run_append(c, &s, NULL, &e), MFU_E_LIMIT);
    s.step = 3; /* a repeat would merge: refused too, no column made again */
    s.loss = 2.5;
    assert_int_equal(mfu_run_append(c, &s, NULL, &e), MFU_E_LIMIT);
    assert_null(mfu_run_column(c, MFU_COL_LOSS));
    assert_int_equal(mfu_run_count(c), N);
    /* taking a column: the run keeps none for it */
    mfu_run *d = rich_run();
    size_t len = 1;
    double *loss = mfu__run_take_column(d, MFU_COL_LOSS, &len);
    assert_non_null(loss);
    assert_int_equal(len, 0); /* a short run's columns are malloc's (util/pages.h) */
    assert_true(loss[0] == 3.0 - 1e-4);
    assert_null(mfu_run_column(d, MFU_COL_LOSS));
    assert_non_null(mfu_run_column(d, MFU_COL_STEP_TIME_S));
    assert_null(mfu__run_take_column(d, MFU_COL_LOSS, &len));
    assert_null(mfu__run_take_column(d, MFU_COL_COUNT_, &len));
    assert_int_equal(len, 0);
    mfu__pages_free(loss, 0);
    int64_t *steps = mfu__run_take_steps(d, &len);
    assert_non_null(steps);
    assert_int_equal(steps[N - 1], N);
    assert_int_equal(mfu_run_count(d), 0);
    assert_null(mfu_run_column(d, MFU_COL_STEP_TIME_S));
    mfu__pages_free(steps, len);
    assert_null(mfu__run_take_steps(NULL, &len));
    mfu_run_free(c);
    mfu_run_free(d);
    mfu__run_drop_columns(NULL); /* ignored */

    /* the plain report leaves its run as it was */
    assert_non_null(mfu_run_column(a, MFU_COL_LOSS));
    mfu_report_free(ra);
    mfu_report_free(rb);
    mfu_run_free(a);
    mfu_run_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(consume_reports_alike),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
