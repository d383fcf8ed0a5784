/*
 * test_server_registry.c - the runs the server holds (src/server/registry.c): the MFU context
 * from model/device options and the run's metadata (the figures module's), loading from a
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

static void blank_model(mfu__server_model *m)
{
    memset(m, 0, sizeof *m);
    m->peak_flops_per_s = NAN;
    m->devices = NAN;
    m->local_devices = NAN;
}

/* The context of a one-step run with metadata meta, served under model: through a store and
 * the registry, as a request sees it. */
static mfu__ctx served_ctx(const mfu__server_model *model, const mfu_run_meta *meta)
{
    mfu_store *st = NULL;
    assert_int_equal(mfu_store_open(":memory:", MFU_STORE_CREATE, &st, NULL), MFU_OK);
    mfu_run *run = mfu_run_new();
    *mfu_run_meta_mut(run) = *meta;
    mfu_step s;
    mfu_step_init(&s);
    s.step = 1;
    s.tokens = 1000;
    s.step_time_s = 1;
    mfu_run_append(run, &s, NULL, NULL);
    assert_int_equal(mfu_store_put_run(st, "r", run, NULL, NULL), MFU_OK);
    mfu_run_free(run);
    mfu__registry g;
    assert_int_equal(mfu__reg_init(&g, st, model, NULL), MFU_OK);
    mfu__reg_refresh(&g, true);
    mfu__srun *r = mfu__reg_get(&g, "r", false);
    assert_non_null(r);
    assert_true(mfu__srun_read(&g, r, NULL));
    mfu__ctx c = r->ctx;
    mfu__srun_unlock(r);
    mfu__reg_put(&g, r);
    mfu__reg_destroy(&g);
    mfu_store_close(st);
    return c;
}

static void context(void **state)
{
    (void)state;
    mfu__server_model model;
    blank_model(&model);
    mfu_run_meta meta;
    memset(&meta, 0, sizeof meta);
    meta.model_params = meta.tokens_per_step = meta.reported_peak_flops_per_s = NAN;
    mfu__ctx c = served_ctx(&model, &meta);
    assert_true(isnan(c.model_flops_per_token) && isnan(c.peak_flops_per_s));
    /* no device count anywhere: unknown (figures per device), as `mfu report` has it */
    assert_true(isnan(c.devices));
    assert_string_equal(c.devices_source, "unknown");
    assert_non_null(strstr(c.why, "--device"));

    /* The log names its device, dtype, world size and sequence length; the server the model. */
    snprintf(meta.device, sizeof meta.device, "NVIDIA H100 80GB HBM3");
    snprintf(meta.dtype, sizeof meta.dtype, "fp8");
    meta.world_size = 16;
    meta.seq_len = 8192;
    assert_int_equal(mfu_preset_find("llama3-8b", &model.arch, NULL), MFU_OK);
    model.has_model = true;
    c = served_ctx(&model, &meta);
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

    /* Flags win over the log: devices, local devices, dtype, peak. */
    model.devices = 64;
    model.local_devices = 8;
    model.dtype_given = true;
    model.dtype = MFU_DTYPE_BF16;
    model.peak_flops_per_s = 900e12;
    c = served_ctx(&model, &meta);
    assert_true(c.devices == 64 && c.local_devices == 8 && c.peak_flops_per_s == 900e12);
    assert_string_equal(c.dtype, "bf16");
    assert_string_equal(c.devices_source, "--devices");

    /* Without a sequence length anywhere (the preset's trained length taken away too) the
     * reason names --seq. */
    meta.seq_len = 0;
    model.arch.trained_seq = 0;
    c = served_ctx(&model, &meta);
    assert_true(isnan(c.model_flops_per_token));
    assert_non_null(strstr(c.why, "--seq"));

    /* A device the table does not know (a monitor's "cpu"): the peak the file states, else
     * none. */
    meta.seq_len = 8192;
    model.peak_flops_per_s = NAN;
    model.dtype_given = false;
    snprintf(meta.device, sizeof meta.device, "cpu");
    snprintf(meta.dtype, sizeof meta.dtype, "fp32");
    meta.reported_peak_flops_per_s = 166151808000.0;
    c = served_ctx(&model, &meta);
    assert_true(c.peak_flops_per_s == 166151808000.0);
    assert_string_equal(c.why, "");
    meta.reported_peak_flops_per_s = NAN;
    c = served_ctx(&model, &meta);
    assert_true(isnan(c.peak_flops_per_s));
    assert_non_null(strstr(c.why, "--device"));
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
    mfu__fwindow fw;
    assert_true(mfu__srun_window(r, &fw));
    assert_int_equal(fw.rows, MFU_SERVER_METRICS_WINDOW);
    /* last 50 rows: 45 of 1 s and 5 of 2 s: the typical step (median) 1 s at 1000 tokens/s;
     * the total 50000 tokens over 55 s, the slow steps costing 5 s */
    assert_true(fw.median_tokens_per_s == 1000 && fw.median_step_time_s == 1);
    assert_true(near(fw.tokens_per_s, 50000.0 / 55, 1e-12) && near(fw.stall_s, 5, 1e-12));
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
    *mfu_run_meta_mut(tail) = *mfu_run_meta_get(changed); /* the same header */
    for (size_t i = 0; i < 202; i++) {                    /* row 150 differs in its loss only */
        mfu_step s;
        mfu_run_get(changed, i, &s);
        if (i == 150)
            s.loss = 99;
        mfu_run_append(tail, &s, NULL, NULL);
    }
    mfu_run_free(changed);
    mfu__srun_set(&g, r, tail, false, &first, &old_n);
    assert_int_equal(first, 150);
    /* the same rows under another header (the world size gone): every row's figures change */
    mfu_run *nometa = make_run(202, 1);
    mfu_run_meta_mut(nometa)->world_size = 0;
    mfu__srun_set(&g, r, nometa, false, &first, &old_n);
    assert_int_equal(first, 0);
    assert_true(isnan(mfu__srun_value(r, MFU__F_TOKENS_PER_S_PER_DEVICE, 0)));
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
        cmocka_unit_test(context),
        cmocka_unit_test(store_runs_load_and_follow),
        cmocka_unit_test(followed_run_grows_in_place),
        cmocka_unit_test(posted_rows_and_ranks),
        cmocka_unit_test(field_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
