/*
 * test_server_insight.c - the server's analysis (src/server/insight.c) is the one `mfu report`
 * runs: the findings and segments the API sends for a run are those of mfu_report_compute() on
 * the same run and context, per-rank observations (a straggler) and per-step recomputation
 * included.
 *
 * The run: 240 steps of 8 ranks (canonical rows, merged as ingest merges them), rank 3 12 %
 * slower, full recomputation for the first 120 steps and none after, gpt2 at sequence 4096 on
 * H100 SXM at HFU 0.45.
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

#include "server/internal.h"
#include "synth.h"

#define STEPS 240
#define RANKS 8
#define TOKENS 1048576.0

static void blank_model(mfu__server_model *m)
{
    memset(m, 0, sizeof *m);
    m->peak_flops_per_s = NAN;
    m->devices = NAN;
    m->local_devices = NAN;
}

/* The server's model: gpt2 on h100-sxm (the sequence length is the run's). */
static void gpt2_h100(mfu__server_model *m)
{
    blank_model(m);
    assert_int_equal(mfu_preset_find("gpt2", &m->arch, NULL), MFU_OK);
    m->has_model = true;
    assert_int_equal(mfu_device_find("h100-sxm", &m->device, NULL), MFU_OK);
}

/* Model and hardware FLOPs per token of gpt2 at 4096 with full recomputation. */
static void flops_per_token(double *model, double *hw)
{
    mfu_arch a;
    assert_int_equal(mfu_preset_find("gpt2", &a, NULL), MFU_OK);
    mfu_workload wl;
    memset(&wl, 0, sizeof wl);
    wl.seq = 4096;
    mfu_flops_options o;
    memset(&o, 0, sizeof o);
    wl.recompute = MFU_RECOMPUTE_FULL;
    mfu_flops f;
    assert_int_equal(mfu_flops_compute(&a, &wl, &o, &f, NULL), MFU_OK);
    *model = f.model_flops;
    *hw = f.hardware_flops;
}

/* The run described in the file comment. ranks: how many ranks print each step (1: rank 0
 * only, no observations). recompute_at/dtype_at: a row whose recompute / dtype code is changed
 * (SIZE_MAX: none). */
static mfu_run *make_run(int ranks, size_t recompute_at, size_t dtype_at)
{
    double fpt, hw;
    flops_per_token(&fpt, &hw);
    const mfu_device_info *dev;
    assert_int_equal(mfu_device_find("h100-sxm", &dev, NULL), MFU_OK);
    double peak;
    assert_int_equal(mfu_device_peak_flops_per_s(dev, MFU_DTYPE_BF16, false, &peak, NULL), MFU_OK);
    static const double warm[] = {3.0, 1.8, 1.2};
    syn_noise nz = {0.01, 0.3, 0, 1, 1, warm, 3};
    double mult[STEPS];
    syn_multipliers(7, STEPS, &nz, mult);
    syn_rng rng = {99};
    mfu_run *run = mfu_run_new();
    assert_non_null(run);
    mfu_run_meta *m = mfu_run_meta_mut(run);
    snprintf(m->format, sizeof m->format, "mfu");
    m->seq_len = 4096;
    m->world_size = RANKS;
    m->global_batch = 256;
    snprintf(m->dtype, sizeof m->dtype, "bf16");
    m->tokens_per_step = TOKENS;
    for (size_t i = 0; i < STEPS; i++) {
        bool full = i < STEPS / 2;
        /* HFU 0.45 throughout: a recomputed token costs hw FLOPs */
        double t = TOKENS * (full ? hw : fpt) / (0.45 * RANKS * peak) * mult[i];
        for (int r = 0; r < ranks; r++) {
            mfu_step s;
            mfu_step_init(&s);
            s.step = (int64_t)i + 1;
            s.rank = r;
            s.tokens = TOKENS;
            s.loss = 3 + exp(-(double)i / 100);
            s.recompute = full ? MFU_RECOMPUTE_FULL : MFU_RECOMPUTE_NONE;
            s.dtype = MFU_DTYPE_BF16;
            if (i == recompute_at)
                s.recompute = MFU_RECOMPUTE_SELECTIVE;
            if (i == dtype_at)
                s.dtype = MFU_DTYPE_FP16;
            /* rank 0's line is the row; the others' own times are its observations */
            s.step_time_s = r == 0 ? t : t * (r == 3 ? 1.12 : 1.0) * exp(0.005 * syn_normal(&rng));
            assert_int_equal(mfu_run_append(run, &s, NULL, NULL), MFU_OK);
        }
    }
    assert_int_equal(mfu_run_count(run), STEPS);
    assert_int_equal(mfu_run_rank_obs_count(run), (size_t)STEPS * (size_t)(ranks - 1));
    return run;
}

/* The finding kinds of the analysis the API sends for r (read-locked by the caller). */
static void served(const mfu__registry *g, mfu__srun *r, bool findings, json_t **out)
{
    mfu__sb b;
    mfu__sb_init(&b, 0);
    char why[256] = "";
    if (!mfu__insight_json(g, r, findings, &b, why, sizeof why))
        fail_msg("insight: %s", why);
    json_error_t je;
    *out = json_loadb(b.p, b.len, 0, &je);
    mfu__sb_free(&b);
    assert_non_null(*out);
}

static void served_kinds(const mfu__registry *g, mfu__srun *r, char *buf, size_t n)
{
    json_t *j;
    served(g, r, true, &j);
    buf[0] = '\0';
    size_t i;
    json_t *f;
    json_array_foreach(json_object_get(j, "findings"), i, f)
    {
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%s", len ? "," : "",
                 json_string_value(json_object_get(f, "kind")));
        /* the contract's message is the summary line */
        assert_true(json_equal(json_object_get(f, "message"), json_object_get(f, "summary")));
    }
    json_decref(j);
}

/* The finding kinds `mfu report` finds on run with gpt2 on h100-sxm and the log's context. */
static void report_kinds(const mfu_run *run, char *buf, size_t n, int64_t *starts, size_t *nseg)
{
    mfu_report_input in;
    memset(&in, 0, sizeof in);
    in.has_arch = true;
    assert_int_equal(mfu_preset_find("gpt2", &in.arch, NULL), MFU_OK);
    in.device = "h100-sxm";
    mfu_report *rep = NULL;
    assert_int_equal(mfu_report_compute(run, &in, &rep, NULL), MFU_OK);
    const mfu_analysis *a = mfu_report_analysis(rep);
    assert_non_null(a);
    buf[0] = '\0';
    for (size_t i = 0; i < mfu_analysis_finding_count(a); i++) {
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, "%s%s", len ? "," : "", mfu_analysis_finding(a, i)->kind);
    }
    *nseg = mfu_analysis_segment_count(a);
    for (size_t i = 0; i < *nseg && i < 8; i++)
        starts[i] = mfu_analysis_segment(a, i)->start_step;
    mfu_report_free(rep);
}

/* A registry over an in-memory store holding run as "x", with gpt2 on h100-sxm as the server's
 * flags; *r is "x", read (loaded, not live). */
static void serve_stored(mfu_store **st, mfu__server_model *model, mfu__registry *g, mfu__srun **r,
                         const mfu_run *run)
{
    assert_int_equal(mfu_store_open(":memory:", MFU_STORE_CREATE, st, NULL), MFU_OK);
    assert_int_equal(mfu_store_put_run(*st, "x", run, NULL, NULL), MFU_OK);
    gpt2_h100(model);
    assert_int_equal(mfu__reg_init(g, *st, model, NULL), MFU_OK);
    g->flags_given = true;
    mfu__reg_refresh(g, true);
    *r = mfu__reg_get(g, "x", false);
    assert_non_null(*r);
    assert_true(mfu__srun_read(g, *r, NULL));
    mfu__srun_unlock(*r);
}

static void the_analysis_is_the_reports(void **state)
{
    (void)state;
    mfu_run *run = make_run(RANKS, SIZE_MAX, SIZE_MAX);
    char want[256], got[256];
    int64_t starts[8];
    size_t nseg = 0;
    report_kinds(run, want, sizeof want, starts, &nseg);
    /* what the report finds: the slow rank and the recomputation that ends at step 121 */
    assert_non_null(strstr(want, "straggler"));
    assert_non_null(strstr(want, "recompute"));
    assert_int_equal(nseg, 2);
    assert_int_equal(starts[1], 121);

    mfu_store *st;
    mfu__server_model model;
    mfu__registry g;
    mfu__srun *r;
    serve_stored(&st, &model, &g, &r, run);
    pthread_rwlock_rdlock(&r->rw);
    served_kinds(&g, r, got, sizeof got);
    assert_string_equal(got, want);
    json_t *seg;
    served(&g, r, false, &seg);
    json_t *segs = json_object_get(seg, "segments");
    assert_int_equal(json_array_size(segs), nseg);
    for (size_t i = 0; i < nseg; i++)
        assert_int_equal(json_integer_value(json_object_get(json_array_get(segs, i), "start_step")),
                         starts[i]);
    assert_string_equal(json_string_value(json_object_get(seg, "unit")), "tokens");
    /* the boundary is the recomputation: the workload term moved, the config says so */
    json_t *d0 = json_array_get(json_object_get(seg, "decomposition"), 0);
    assert_non_null(strstr(json_string_value(json_object_get(d0, "config_change")), "recompute"));
    json_decref(seg);
    /* the summary is the report's steady-state median */
    mfu__summary sm;
    assert_true(mfu__srun_summary(&g, r, &sm));
    assert_true(sm.hfu > 0.40 && sm.hfu < 0.50);
    pthread_rwlock_unlock(&r->rw);

    mfu__reg_put(&g, r);
    mfu__reg_destroy(&g);
    mfu_store_close(st);
    mfu_run_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_analysis_is_the_reports),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
