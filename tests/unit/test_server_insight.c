/*
 * test_server_insight.c - the server's analysis (src/server/insight.c) is the one `mfu report`
 * runs: the findings and segments the API sends for a run are those of mfu_report_compute() on
 * the same run and context, per-rank observations (a straggler) and per-step recomputation
 * included; a run whose re-read changes only recompute, dtype or its observations is analysed
 * again (src/server/registry.c's change detection); and a POST body of several ranks keeps its
 * per-rank observations, served and stored.
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

/* Re-reading the run with the lagging ranks' lines added changes its observations only: the
 * server must see a change and analyse it again (the straggler appears). */
static void observations_alone_are_a_change(void **state)
{
    (void)state;
    mfu_run *bare = make_run(1, SIZE_MAX, SIZE_MAX);
    mfu_store *st;
    mfu__server_model model;
    mfu__registry g;
    mfu__srun *r;
    serve_stored(&st, &model, &g, &r, bare);
    char got[256], want[256];
    int64_t starts[8];
    size_t nseg;
    pthread_rwlock_rdlock(&r->rw);
    served_kinds(&g, r, got, sizeof got);
    pthread_rwlock_unlock(&r->rw);
    report_kinds(bare, want, sizeof want, starts, &nseg);
    assert_string_equal(got, want);
    assert_null(strstr(got, "straggler")); /* one rank: nothing to compare */
    assert_non_null(strstr(got, "recompute"));

    /* the same rows again: no change, the cached analysis stands */
    size_t first, old_n;
    uint64_t v = r->version;
    assert_false(mfu__srun_set(&g, r, make_run(1, SIZE_MAX, SIZE_MAX), false, &first, &old_n));
    assert_int_equal(first, STEPS);
    assert_int_equal(r->version, v);

    /* every rank's lines: the rows are the same, 7 observations a step are new */
    mfu_run *full = make_run(RANKS, SIZE_MAX, SIZE_MAX);
    report_kinds(full, want, sizeof want, starts, &nseg);
    assert_true(mfu__srun_set(&g, r, full, false, &first, &old_n));
    assert_int_equal(first, STEPS); /* no row to send to pages */
    assert_int_equal(old_n, STEPS);
    assert_true(r->version > v);
    pthread_rwlock_rdlock(&r->rw);
    served_kinds(&g, r, got, sizeof got);
    pthread_rwlock_unlock(&r->rw);
    assert_non_null(strstr(got, "straggler"));
    assert_string_equal(got, want);

    /* one observation fewer (same count of rows) is a change too */
    mfu_run *less = make_run(RANKS, SIZE_MAX, SIZE_MAX);
    mfu_run *cut = mfu_run_new();
    for (size_t i = 0; i < mfu_run_count(less); i++) {
        mfu_step s;
        mfu_run_get(less, i, &s);
        mfu_run_append(cut, &s, NULL, NULL);
    }
    *mfu_run_meta_mut(cut) = *mfu_run_meta_get(less);
    for (size_t i = 0; i + 1 < mfu_run_rank_obs_count(less); i++) {
        mfu_rank_obs o;
        mfu_run_rank_obs_get(less, i, &o);
        assert_int_equal(mfu_run_rank_obs_append(cut, &o, NULL), MFU_OK);
    }
    mfu_run_free(less);
    v = r->version;
    assert_true(mfu__srun_set(&g, r, cut, false, &first, &old_n));
    assert_true(r->version > v);

    mfu__reg_put(&g, r);
    mfu__reg_destroy(&g);
    mfu_store_close(st);
    mfu_run_free(bare);
}

/* A re-read that changes only one row's recompute or dtype code, far from the end (where no
 * merge can reach), is a change from that row on. */
static void recompute_and_dtype_alone_are_changes(void **state)
{
    (void)state;
    mfu_run *run = make_run(1, SIZE_MAX, SIZE_MAX);
    mfu_store *st;
    mfu__server_model model;
    mfu__registry g;
    mfu__srun *r;
    serve_stored(&st, &model, &g, &r, run);
    size_t first, old_n;
    uint64_t v = r->version;
    assert_true(mfu__srun_set(&g, r, make_run(1, 10, SIZE_MAX), false, &first, &old_n));
    assert_int_equal(first, 10);
    assert_true(r->version > v);
    v = r->version;
    assert_true(mfu__srun_set(&g, r, make_run(1, 10, 20), false, &first, &old_n));
    assert_int_equal(first, 20);
    assert_true(r->version > v);
    v = r->version;
    assert_false(mfu__srun_set(&g, r, make_run(1, 10, 20), false, &first, &old_n));
    assert_int_equal(r->version, v);
    mfu__reg_put(&g, r);
    mfu__reg_destroy(&g);
    mfu_store_close(st);
    mfu_run_free(run);
}

/* A followed log: a lagging rank's lines for steps already read merge as observations; the
 * follower's update must count as a change (mfu__srun_grew). */
static void lagging_rank_lines_are_a_change(void **state)
{
    (void)state;
    mfu_store *st = NULL;
    assert_int_equal(mfu_store_open(":memory:", MFU_STORE_CREATE, &st, NULL), MFU_OK);
    mfu__server_model model;
    blank_model(&model);
    mfu__registry g;
    assert_int_equal(mfu__reg_init(&g, st, &model, NULL), MFU_OK);
    mfu__srun *r = mfu__reg_get(&g, "log", true);
    mfu_ingest_opts o;
    memset(&o, 0, sizeof o);
    o.format = "mfu";
    mfu_ingest *ing = NULL;
    assert_int_equal(mfu_ingest_new(&o, &ing, NULL), MFU_OK);
    char line[160];
    const char *header = "{\"mfu_run\":1,\"world_size\":3}\n";
    assert_int_equal(mfu_ingest_feed_buffer(ing, header, strlen(header), "t", NULL), MFU_OK);
    for (int i = 1; i <= 100; i++)
        for (int k = 0; k < 2; k++) {
            int n = snprintf(line, sizeof line,
                             "{\"step\":%d,\"rank\":%d,\"step_time_s\":2,\"tokens\":100}\n", i, k);
            assert_int_equal(mfu_ingest_feed_buffer(ing, line, (size_t)n, "t", NULL), MFU_OK);
        }
    size_t first, old_n;
    assert_true(mfu__srun_set(&g, r, mfu_ingest_peek(ing), true, &first, &old_n));
    assert_int_equal(mfu_run_rank_obs_count(r->run), 100);

    /* rank 2 catches up on steps 98..100: no row changes, three observations arrive */
    mfu_step tail[MFU__TAIL];
    pthread_rwlock_wrlock(&r->rw);
    size_t n0 = mfu_run_count(r->run), nt = mfu__srun_tail(r, tail);
    mfu_run_meta meta = *mfu_run_meta_get(r->run);
    size_t obs0 = mfu_run_rank_obs_count(r->run);
    uint64_t v = r->version;
    for (int i = 98; i <= 100; i++) {
        int n = snprintf(line, sizeof line,
                         "{\"step\":%d,\"rank\":2,\"step_time_s\":2.5,\"tokens\":100}\n", i);
        assert_int_equal(mfu_ingest_feed_buffer(ing, line, (size_t)n, "t", NULL), MFU_OK);
    }
    assert_int_equal(mfu__srun_grew(&g, r, n0, tail, nt, &meta, obs0), 100);
    assert_int_equal(mfu_run_count(r->run), 100);
    assert_int_equal(mfu_run_rank_obs_count(r->run), 103);
    assert_true(r->version > v);

    /* nothing new: no change */
    v = r->version;
    nt = mfu__srun_tail(r, tail);
    obs0 = mfu_run_rank_obs_count(r->run);
    assert_int_equal(mfu__srun_grew(&g, r, 100, tail, nt, &meta, obs0), 100);
    assert_int_equal(r->version, v);
    pthread_rwlock_unlock(&r->rw);

    mfu__srun_unset(r, mfu_ingest_peek(ing));
    mfu_ingest_free(ing);
    mfu__reg_put(&g, r);
    mfu__reg_destroy(&g);
    mfu_store_close(st);
}

/* A POST body where every rank posts each step: the body's rows merge, and its per-rank
 * observations must reach the served run and the store (mfu__posted_steps) so that the
 * straggler is found live and after a restart; a stored run whose rows merge on reading is not
 * reloaded at every listing. */
static void posted_ranks_keep_their_observations(void **state)
{
    (void)state;
    mfu_store *st = NULL;
    assert_int_equal(mfu_store_open(":memory:", MFU_STORE_CREATE, &st, NULL), MFU_OK);
    mfu__server_model model;
    gpt2_h100(&model);
    model.workload.seq = 4096; /* a posted run has no header: --seq and --devices say it */
    model.devices = RANKS;
    mfu__registry g;
    assert_int_equal(mfu__reg_init(&g, st, &model, NULL), MFU_OK);
    g.flags_given = true;
    mfu_run *body = make_run(RANKS, SIZE_MAX, SIZE_MAX); /* as parse_steps reads the body */
    const size_t nobs = (size_t)STEPS * (RANKS - 1);

    mfu__srun *r = mfu__reg_get(&g, "posted", true);
    size_t first = 99;
    assert_int_equal(mfu__srun_append(&g, r, body, NULL, 0, &first, NULL), MFU_OK);
    assert_int_equal(first, 0);
    assert_int_equal(mfu_run_count(r->run), STEPS);
    assert_int_equal(mfu_run_rank_obs_count(r->run), nobs);
    for (size_t i = 0; i < nobs; i += 97) { /* each where the body had it */
        mfu_rank_obs a, b;
        assert_true(mfu_run_rank_obs_get(body, i, &a));
        assert_true(mfu_run_rank_obs_get(r->run, i, &b));
        assert_true(a.row == b.row && a.rank == b.rank && a.step_time_s == b.step_time_s);
    }
    char got[256];
    pthread_rwlock_rdlock(&r->rw);
    served_kinds(&g, r, got, sizeof got);
    pthread_rwlock_unlock(&r->rw);
    assert_non_null(strstr(got, "straggler"));
    mfu__reg_put(&g, r);

    /* the store, as POST writes it: read back, the same rows and observations */
    mfu_step *v = NULL;
    bool *is_obs = NULL;
    size_t n = 0;
    assert_int_equal(mfu__posted_steps(body, &v, &is_obs, &n, NULL), MFU_OK);
    assert_int_equal(n, STEPS + nobs);
    assert_true(!is_obs[0] && is_obs[1] && is_obs[RANKS - 1] && !is_obs[RANKS]);
    int64_t id = 0;
    assert_int_equal(mfu_store_create_run(st, "posted", mfu_run_meta_get(body), &id, NULL), MFU_OK);
    assert_int_equal(mfu_store_append_steps(st, id, v, n, NULL), MFU_OK);
    free(v);
    free(is_obs);
    mfu__reg_destroy(&g);

    /* a restarted server: the stored run, not live */
    assert_int_equal(mfu__reg_init(&g, st, &model, NULL), MFU_OK);
    g.flags_given = true;
    mfu__reg_refresh(&g, true);
    r = mfu__reg_get(&g, "posted", false);
    assert_non_null(r);
    assert_true(mfu__srun_read(&g, r, NULL));
    assert_int_equal(mfu_run_count(r->run), STEPS);
    assert_int_equal(mfu_run_rank_obs_count(r->run), nobs);
    served_kinds(&g, r, got, sizeof got);
    mfu__srun_unlock(r);
    assert_non_null(strstr(got, "straggler"));
    uint64_t version = r->version;
    mfu__reg_refresh(&g, true); /* the listing counts STEPS + nobs stored rows */
    assert_false(r->stale);
    assert_true(mfu__srun_read(&g, r, NULL));
    mfu__srun_unlock(r);
    assert_int_equal(r->version, version); /* not loaded again */

    mfu__reg_put(&g, r);
    mfu__reg_destroy(&g);
    mfu_store_close(st);
    mfu_run_free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_analysis_is_the_reports),
        cmocka_unit_test(observations_alone_are_a_change),
        cmocka_unit_test(recompute_and_dtype_alone_are_changes),
        cmocka_unit_test(lagging_rank_lines_are_a_change),
        cmocka_unit_test(posted_ranks_keep_their_observations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
