/*
 * test_server_registry.c - the runs the server holds (src/server/registry.c): the per-row
 * derivation, the MFU context from model/device options and the run's metadata, loading from a
 * store, replacing rows the way a follower does (the first changed row), posted rows with
 * per-rank windows, summaries and the /metrics window.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "server/internal.h"

static bool near(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fabs(b);
}

static void derivation_follows_the_analysis_rules(void **state)
{
    (void)state;
    mfu_run_meta m;
    memset(&m, 0, sizeof m);
    m.tokens_per_step = NAN;
    mfu_step s, p;
    double tps, t, st;

    mfu_step_init(&s); /* tokens and step time */
    s.step = 10;
    s.tokens = 4096;
    s.step_time_s = 2;
    mfu__derive_row(&s, NULL, &m, 8, &tps, &t, &st);
    assert_true(tps == 2048 && t == 2 && st == 2);

    s.tokens_per_s = 2500; /* the log's own global figure wins */
    s.tokens_per_s_scope = MFU_SCOPE_GLOBAL;
    mfu__derive_row(&s, NULL, &m, 8, &tps, &t, &st);
    assert_true(tps == 2500 && near(t, 4096.0 / 2500, 1e-15) && st == 2);

    s.tokens_per_s = 300; /* per device: times the devices */
    s.tokens_per_s_scope = MFU_SCOPE_DEVICE;
    mfu__derive_row(&s, NULL, &m, 8, &tps, &t, &st);
    assert_true(tps == 2400);

    s.tokens_per_s_scope = MFU_SCOPE_UNKNOWN; /* unknown scope: not used */
    mfu__derive_row(&s, NULL, &m, 8, &tps, &t, &st);
    assert_true(tps == 2048);

    mfu_step_init(&s); /* no step time: Δtime / Δstep from the previous row */
    mfu_step_init(&p);
    p.step = 10;
    p.time_s = 1000;
    s.step = 14;
    s.time_s = 1010;
    s.tokens = 1000;
    mfu__derive_row(&s, &p, &m, 1, &tps, &t, &st);
    assert_true(st == 2.5 && tps == 400);
    mfu__derive_row(&s, NULL, &m, 1, &tps, &t, &st); /* no previous row: unknown */
    assert_true(isnan(st) && isnan(tps));

    m.tokens_per_step = 512; /* tokens from the header */
    mfu_step_init(&s);
    s.step = 1;
    s.step_time_s = 0.5;
    mfu__derive_row(&s, NULL, &m, 1, &tps, &t, &st);
    assert_true(tps == 1024);

    s.step_time_s = -1; /* an impossible step time gives no rate */
    mfu__derive_row(&s, NULL, &m, 1, &tps, &t, &st);
    assert_true(isnan(tps) && st == -1);
}

static void blank_model(mfu__server_model *m)
{
    memset(m, 0, sizeof *m);
    m->peak_flops_per_s = NAN;
    m->devices = NAN;
    m->local_devices = NAN;
}

static void context(void **state)
{
    (void)state;
    mfu__server_model model;
    blank_model(&model);
    mfu_run_meta meta;
    memset(&meta, 0, sizeof meta);
    mfu__ctx c;
    mfu__ctx_compute(&model, &meta, 0, &c);
    assert_true(isnan(c.model_flops_per_token) && isnan(c.peak_flops_per_s));
    assert_true(c.devices == 1);
    assert_string_equal(c.devices_source, "default");
    assert_non_null(strstr(c.why, "--device"));
    assert_true(isnan(mfu__field_scale(&c, MFU__F_MFU)));
    assert_true(mfu__field_scale(&c, MFU__F_TOKENS_PER_S) == 1);

    /* The log names its device, dtype, world size and sequence length; the server the model. */
    snprintf(meta.device, sizeof meta.device, "NVIDIA H100 80GB HBM3");
    snprintf(meta.dtype, sizeof meta.dtype, "fp8");
    meta.world_size = 16;
    meta.seq_len = 8192;
    assert_int_equal(mfu_preset_find("llama3-8b", &model.arch, NULL), MFU_OK);
    model.has_model = true;
    mfu__ctx_compute(&model, &meta, 0, &c);
    const mfu_device_info *h100;
    assert_int_equal(mfu_device_find("h100-sxm", &h100, NULL), MFU_OK);
    double fp8;
    assert_int_equal(mfu_device_peak_flops_per_s(h100, MFU_DTYPE_FP8, false, &fp8, NULL), MFU_OK);
    assert_true(c.peak_flops_per_s == fp8);
    assert_string_equal(c.device_id, "h100-sxm");
    assert_string_equal(c.model_name_label, "NVIDIA H100 80GB HBM3");
    assert_true(c.devices == 16 && c.local_devices == 16);
    assert_string_equal(c.devices_source, "log world_size");
    mfu_workload wl;
    memset(&wl, 0, sizeof wl);
    wl.seq = 8192;
    mfu_flops f;
    assert_int_equal(mfu_flops_compute(&model.arch, &wl, &model.options, &f, NULL), MFU_OK);
    assert_true(c.model_flops_per_token == f.model_flops);
    assert_string_equal(c.why, "");
    assert_true(near(mfu__field_scale(&c, MFU__F_MFU), f.model_flops / (16 * fp8), 1e-15));

    /* Flags win over the log: devices, local devices, dtype, peak. */
    model.devices = 64;
    model.local_devices = 8;
    model.dtype_given = true;
    model.dtype = MFU_DTYPE_BF16;
    model.peak_flops_per_s = 900e12;
    mfu__ctx_compute(&model, &meta, 3, &c);
    assert_true(c.devices == 64 && c.local_devices == 8 && c.peak_flops_per_s == 900e12);
    assert_string_equal(c.dtype, "bf16");

    /* Without a sequence length anywhere the reason names --seq. */
    meta.seq_len = 0;
    mfu__ctx_compute(&model, &meta, 0, &c);
    assert_true(isnan(c.model_flops_per_token));
    assert_non_null(strstr(c.why, "--seq"));
}

/* A run of n steps: 1000 tokens each, step time 1 + (i % 10 == 9 ? 1 : 0) (every tenth slow). */
static mfu_run *make_run(size_t n, int64_t first_step)
{
    mfu_run *r = mfu_run_new();
    mfu_run_meta_mut(r)->world_size = 4;
    for (size_t i = 0; i < n; i++) {
        mfu_step s;
        mfu_step_init(&s);
        s.step = first_step + (int64_t)i;
        s.tokens = 1000;
        s.step_time_s = (i % 10 == 9) ? 2 : 1;
        s.loss = 5 - (double)i / 1000;
        mfu_run_append(r, &s, NULL, NULL);
    }
    return r;
}

static void store_runs_load_and_follow(void **state)
{
    (void)state;
    mfu_store *st = NULL;
    assert_int_equal(mfu_store_open(":memory:", MFU_STORE_CREATE, &st, NULL), MFU_OK);
    mfu_run *run = make_run(200, 1);
    assert_int_equal(mfu_store_put_run(st, "r1", run, NULL, NULL), MFU_OK);
    mfu_run_free(run);

    mfu__server_model model;
    blank_model(&model);
    model.peak_flops_per_s = 1e12;
    mfu__registry g;
    assert_int_equal(mfu__reg_init(&g, st, &model, NULL), MFU_OK);
    mfu__reg_refresh(&g, true);
    assert_null(mfu__reg_get(&g, "nope", false));
    mfu__srun *r = mfu__reg_get(&g, "r1", false);
    assert_non_null(r);
    assert_false(r->loaded);
    assert_int_equal(r->steps, 200); /* from the listing, before loading */

    assert_true(mfu__srun_read(&g, r, NULL));
    assert_true(r->loaded && r->monotonic);
    assert_int_equal(mfu_run_count(r->run), 200);
    assert_true(r->ctx.devices == 4);
    assert_true(mfu__srun_value(r, MFU__F_TOKENS_PER_S, 0) == 1000);
    assert_true(mfu__srun_value(r, MFU__F_TOKENS_PER_S, 9) == 500);
    assert_true(mfu__srun_value(r, MFU__F_TOKENS_PER_S_PER_DEVICE, 0) == 250);
    assert_true(isnan(mfu__srun_value(r, MFU__F_MFU, 0))); /* no model */
    assert_true(mfu__srun_value(r, MFU__F_LOSS, 100) == 5 - 0.1);
    mfu__summary sm;
    assert_true(mfu__srun_summary(&g, r, &sm)); /* from mfu/report.h: steady-state medians */
    assert_true(sm.tokens_per_s == 1000 && sm.step_time_s == 1); /* the slow tenth does not
                                                                     move a median */
    assert_true(isnan(sm.mfu));                                  /* no model */
    size_t used;
    double tps, stime;
    assert_true(mfu__srun_window(r, &tps, &stime, &used));
    assert_int_equal(used, MFU_SERVER_METRICS_WINDOW);
    /* last 50 rows: 45 of 1 s and 5 of 2 s, 50000 tokens over 55 s */
    assert_true(near(tps, 50000.0 / 55, 1e-12) && near(stime, 55.0 / 50, 1e-12));
    mfu__srun_unlock(r);

    /* A follower re-reads its file: the same rows plus two, then a rewritten file. */
    size_t first, old_n;
    mfu__srun_set(&g, r, make_run(202, 1), false, &first, &old_n);
    assert_int_equal(first, 200);
    assert_int_equal(old_n, 200);
    uint64_t v = r->version;
    mfu__srun_set(&g, r, make_run(202, 1), false, &first, &old_n);
    assert_int_equal(first, 202); /* nothing changed */
    assert_int_equal(r->version, v);
    mfu_run *changed = make_run(202, 1);
    mfu_run *tail = mfu_run_new();
    for (size_t i = 0; i < 202; i++) { /* row 150 differs in its loss only */
        mfu_step s;
        mfu_run_get(changed, i, &s);
        if (i == 150)
            s.loss = 99;
        mfu_run_append(tail, &s, NULL, NULL);
    }
    mfu_run_free(changed);
    mfu__srun_set(&g, r, tail, false, &first, &old_n);
    assert_int_equal(first, 150);
    mfu__srun_set(&g, r, make_run(10, 500), false, &first, &old_n); /* rewritten */
    assert_int_equal(first, 0);
    assert_int_equal(old_n, 202);
    assert_int_equal(r->first_step, 500);
    mfu__reg_put(&g, r);
    mfu__reg_destroy(&g);
    mfu_store_close(st);
}

/* A follower's session: its run is served borrowed, and grows in place. */
static void followed_run_grows_in_place(void **state)
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
    const char *header = "{\"mfu_run\":1,\"world_size\":2}\n";
    assert_int_equal(mfu_ingest_feed_buffer(ing, header, strlen(header), "t", NULL), MFU_OK);
    for (int i = 1; i <= 100; i++) {
        int n = snprintf(line, sizeof line, "{\"step\":%d,\"step_time_s\":2,\"tokens\":100}\n", i);
        assert_int_equal(mfu_ingest_feed_buffer(ing, line, (size_t)n, "t", NULL), MFU_OK);
    }
    size_t first = 99, old_n = 99;
    mfu__srun_set(&g, r, mfu_ingest_peek(ing), true, &first, &old_n);
    assert_int_equal(first, 0);
    assert_int_equal(old_n, 0);
    assert_true(r->loaded && r->run == mfu_ingest_peek(ing) && r->run_own == NULL);
    assert_true(r->ctx.devices == 2);

    /* two new lines: rows 100 and 101 are new */
    mfu_step tail[MFU__TAIL];
    pthread_rwlock_wrlock(&r->rw);
    size_t n0 = mfu_run_count(r->run), nt = mfu__srun_tail(r, tail);
    mfu_run_meta meta = *mfu_run_meta_get(r->run);
    const char *more = "{\"step\":101,\"step_time_s\":4,\"tokens\":100}\n"
                       "{\"step\":102,\"step_time_s\":2,\"tokens\":100}\n";
    assert_int_equal(mfu_ingest_feed_buffer(ing, more, strlen(more), "t", NULL), MFU_OK);
    assert_int_equal(mfu__srun_grew(&g, r, n0, tail, nt, &meta, 0), 100);
    pthread_rwlock_unlock(&r->rw);
    assert_int_equal(nt, MFU__TAIL);
    assert_true(mfu__srun_value(r, MFU__F_TOKENS_PER_S, 100) == 25);
    assert_int_equal(r->last_step, 102);

    /* a line repeating step 102 fills its loss: row 101 changed, nothing was added */
    pthread_rwlock_wrlock(&r->rw);
    n0 = mfu_run_count(r->run);
    nt = mfu__srun_tail(r, tail);
    meta = *mfu_run_meta_get(r->run);
    const char *again = "{\"step\":102,\"loss\":1.5}\n";
    assert_int_equal(mfu_ingest_feed_buffer(ing, again, strlen(again), "t", NULL), MFU_OK);
    assert_int_equal(mfu__srun_grew(&g, r, n0, tail, nt, &meta, 0), 101);
    assert_int_equal(mfu_run_count(r->run), 102);
    pthread_rwlock_unlock(&r->rw);
    assert_true(mfu__srun_value(r, MFU__F_LOSS, 101) == 1.5);

    /* the follower stops: the run lets go of the session's rows before they are freed */
    mfu__srun_unset(r, mfu_ingest_peek(ing));
    assert_false(r->loaded);
    assert_null(r->run);
    mfu_ingest_free(ing);
    mfu__reg_put(&g, r);
    mfu__reg_destroy(&g);
    mfu_store_close(st);
}

static void posted_rows_and_ranks(void **state)
{
    (void)state;
    mfu_store *st = NULL;
    assert_int_equal(mfu_store_open(":memory:", MFU_STORE_CREATE, &st, NULL), MFU_OK);
    mfu__server_model model;
    blank_model(&model);
    mfu__registry g;
    assert_int_equal(mfu__reg_init(&g, st, &model, NULL), MFU_OK);
    mfu__srun *r = mfu__reg_get(&g, "live", true);
    assert_non_null(r);
    assert_true(r->live);

    /* two ranks post steps 1..3: rank 1 is slower */
    mfu_run *rows = mfu_run_new();
    mfu_step lite[6];
    size_t k = 0;
    for (int step = 1; step <= 3; step++)
        for (int rank = 0; rank < 2; rank++) {
            mfu_step s;
            mfu_step_init(&s);
            s.step = step;
            s.rank = rank;
            s.tokens = 2000;
            s.step_time_s = rank ? 2 : 1;
            mfu_run_append(rows, &s, NULL, NULL);
            lite[k++] = s;
        }
    assert_int_equal(mfu_run_count(rows), 3); /* the ranks of one step merge */
    size_t first = 99;
    assert_int_equal(mfu__srun_append(&g, r, rows, lite, k, &first, NULL), MFU_OK);
    assert_int_equal(first, 0);
    assert_true(r->posted && r->loaded);
    assert_int_equal(r->nranks, 2);
    assert_true(r->ctx.devices == 2); /* no flag, no world size: the ranks posted */
    assert_string_equal(r->ctx.devices_source, "ranks posted");
    assert_int_equal(r->ranks[1].rank, 1);
    assert_int_equal(r->ranks[1].n, 3);
    assert_true(r->ranks[1].tps[0] == 1000 && r->ranks[0].tps[0] == 2000);
    assert_int_equal(r->ranks[0].last_step, 3);

    /* more rows continue the run */
    mfu_run *more = mfu_run_new();
    mfu_step s;
    mfu_step_init(&s);
    s.step = 4;
    s.rank = 0;
    s.tokens = 2000;
    s.step_time_s = 1;
    mfu_run_append(more, &s, NULL, NULL);
    assert_int_equal(mfu__srun_append(&g, r, more, &s, 1, &first, NULL), MFU_OK);
    assert_int_equal(first, 3);
    assert_int_equal(mfu_run_count(r->run), 4);
    assert_int_equal(r->last_step, 4);
    mfu_run_free(rows);
    mfu_run_free(more);
    mfu__reg_put(&g, r);
    mfu__reg_destroy(&g);
    mfu_store_close(st);
}

static void field_names(void **state)
{
    (void)state;
    for (int f = 0; f < MFU__F_COUNT_; f++) {
        const char *n = mfu__field_name((mfu__field)f);
        assert_non_null(n);
        assert_int_equal(mfu__field_parse(n, strlen(n)), f);
    }
    assert_int_equal(mfu__field_parse("mfux", 4), -1);
    assert_int_equal(mfu__field_parse("mfux", 3), MFU__F_MFU);
    assert_null(mfu__field_name(MFU__F_COUNT_));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(derivation_follows_the_analysis_rules),
        cmocka_unit_test(context),
        cmocka_unit_test(store_runs_load_and_follow),
        cmocka_unit_test(followed_run_grows_in_place),
        cmocka_unit_test(posted_rows_and_ranks),
        cmocka_unit_test(field_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
