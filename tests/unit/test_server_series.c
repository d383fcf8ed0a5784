/*
 * test_server_series.c - the series endpoint (src/server/api.c) over a served run: the answer
 * cache (an answer is reused for the run's rows it was made from, never after the run grew),
 * the running sums of axes=1 from the block checkpoints (registry.c) against a sum from the
 * first row, the pyramid level chosen for a long range, and the pyramids made by the first
 * request that needs them and kept up to date from then on.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "server/internal.h"

typedef struct args {
    const char *keys[8], *values[8];
    int n;
} args;

static const char *arg_of(void *ctx, const char *key)
{
    const args *a = ctx;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->keys[i], key) == 0)
            return a->values[i];
    return NULL;
}

/* GET /api/runs/live/series with the arguments a: the body (free it). */
static char *series(mfu__server *s, args *a, size_t *len)
{
    mfu__route rt;
    memset(&rt, 0, sizeof rt);
    rt.kind = MFU__R_SERIES;
    snprintf(rt.run, sizeof rt.run, "live");
    mfu__reply out;
    memset(&out, 0, sizeof out);
    mfu__api_get(s, &rt, arg_of, a, &out);
    assert_int_equal(out.status, 200);
    assert_non_null(out.body);
    *len = out.len;
    return out.body;
}

static double step_time(int64_t step)
{
    return 1.0 + 0.1 * (double)(step % 7) + 1e-3 * (double)(step % 13);
}

/* Post steps from..to (one rank) to the live run. */
static void post(mfu__server *s, mfu__srun *r, int64_t from, int64_t to)
{
    mfu_run *rows = mfu_run_new();
    assert_non_null(rows);
    for (int64_t step = from; step <= to; step++) {
        mfu_step st;
        mfu_step_init(&st);
        st.step = step;
        st.rank = 0;
        st.tokens = 2000;
        st.step_time_s = step_time(step);
        assert_int_equal(mfu_run_append(rows, &st, NULL, NULL), MFU_OK);
    }
    size_t first = 0;
    mfu_step lite;
    mfu_run_get(rows, 0, &lite);
    assert_int_equal(mfu__srun_append(&s->reg, r, rows, &lite, 1, &first, NULL), MFU_OK);
    mfu_run_free(rows);
}

static int cached_entries(mfu__srun *r)
{
    int n = 0;
    for (int i = 0; i < MFU__SCACHE_ENTRIES; i++)
        n += r->cache[i].body && r->cache[i].version == r->version;
    return n;
}

/* Entries holding a body at all (an answer for older rows included). */
static int held_entries(mfu__srun *r)
{
    int n = 0;
    for (int i = 0; i < MFU__SCACHE_ENTRIES; i++)
        n += r->cache[i].body != NULL;
    return n;
}

static void drop_cache(mfu__srun *r)
{
    for (int i = 0; i < MFU__SCACHE_ENTRIES; i++) {
        free(r->cache[i].body);
        r->cache[i].body = NULL;
    }
}

/* A server over an in-memory store with one run, "live", of steps 1..3000 (*r, held). */
static mfu__server *live_server(mfu_store **st, mfu__srun **r)
{
    mfu__server *s = calloc(1, sizeof *s);
    assert_non_null(s);
    assert_int_equal(mfu_store_open(":memory:", MFU_STORE_CREATE, st, NULL), MFU_OK);
    s->model.peak_flops_per_s = NAN;
    s->model.devices = NAN;
    s->model.local_devices = NAN;
    s->points_limit = MFU_SERVER_POINTS_LIMIT;
    assert_int_equal(mfu__reg_init(&s->reg, *st, &s->model, NULL), MFU_OK);
    *r = mfu__reg_get(&s->reg, "live", true);
    assert_non_null(*r);
    post(s, *r, 1, 3000);
    return s;
}

static void live_server_free(mfu__server *s, mfu_store *st, mfu__srun *r)
{
    mfu__reg_put(&s->reg, r);
    mfu__reg_destroy(&s->reg);
    mfu_store_close(st);
    free(s);
}

static void cache_and_axes(void **state)
{
    (void)state;
    mfu_store *st = NULL;
    mfu__srun *r = NULL;
    mfu__server *s = live_server(&st, &r);

    args a = {{"fields", "max_points", "axes"}, {"step_time_s", "100", "1"}, 3};
    size_t la = 0, lb = 0, lc = 0;
    char *body_a = series(s, &a, &la);
    assert_int_equal(cached_entries(r), 1);
    char *body_b = series(s, &a, &lb); /* from the cache */
    assert_int_equal(la, lb);
    assert_memory_equal(body_a, body_b, la);
    drop_cache(r);
    char *body_c = series(s, &a, &lc); /* made again: the same bytes */
    assert_int_equal(la, lc);
    assert_memory_equal(body_a, body_c, la);

    /* elapsed_s: the sum of the step times from the first row, to the bit */
    json_t *doc = json_loadb(body_a, la, 0, NULL);
    assert_non_null(doc);
    json_t *steps = json_object_get(doc, "step"), *el = json_object_get(doc, "elapsed_s");
    assert_int_equal(json_array_size(steps), 100);
    assert_int_equal(json_array_size(el), 100);
    for (size_t j = 0; j < json_array_size(steps); j++) {
        int64_t upto = (int64_t)json_integer_value(json_array_get(steps, j));
        double sum = 0;
        for (int64_t k = 1; k <= upto; k++)
            sum += step_time(k);
        assert_true(json_real_value(json_array_get(el, j)) == sum);
    }
    json_decref(doc);

    /* another query is another entry; the run grows: nothing cached is used again */
    args b = {{"fields", "max_points"}, {"step_time_s,loss", "50"}, 2};
    size_t ld = 0;
    free(series(s, &b, &ld));
    assert_int_equal(cached_entries(r), 2);
    post(s, r, 3001, 3500);
    assert_int_equal(cached_entries(r), 0);
    size_t le = 0, lf = 0;
    char *body_e = series(s, &a, &le);
    /* and the answers for the older rows are freed by the next one kept, not held */
    assert_int_equal(held_entries(r), 1);
    assert_int_equal(cached_entries(r), 1);
    assert_non_null(strstr(body_e, "\"total\":3500"));
    assert_true(le != la || memcmp(body_e, body_a, la) != 0);
    drop_cache(r);
    char *body_f = series(s, &a, &lf);
    assert_int_equal(le, lf);
    assert_memory_equal(body_e, body_f, le);

    free(body_a);
    free(body_b);
    free(body_c);
    free(body_e);
    free(body_f);
    live_server_free(s, st, r);
}

/* Pyramid p covers the same rows as one made from the whole column col of n rows, block for
 * block at every level. */
static void assert_pyramid_fresh(const mfu__mm *p, const double *col, size_t n)
{
    mfu__mm q;
    memset(&q, 0, sizeof q);
    assert_true(mfu__mm_update(&q, col, n, 0));
    assert_int_equal(p->n, n);
    size_t nb0 = (n + MFU__BLOCK - 1) / MFU__BLOCK;
    assert_memory_equal(p->lo0, q.lo0, nb0);
    assert_memory_equal(p->hi0, q.hi0, nb0);
    for (int k = 0; k < MFU__MM_LEVELS; k++) {
        size_t rows = mfu__mm_block_rows(k + 1), nb = (n + rows - 1) / rows;
        assert_memory_equal(p->lo[k], q.lo[k], nb * sizeof *q.lo[k]);
        assert_memory_equal(p->hi[k], q.hi[k], nb * sizeof *q.hi[k]);
        assert_memory_equal(p->vlo[k], q.vlo[k], nb * sizeof *q.vlo[k]);
        assert_memory_equal(p->vhi[k], q.vhi[k], nb * sizeof *q.vhi[k]);
    }
    mfu__mm_free(&q);
}

/* A pyramid is made by the first request over a long range of its field, not at load: the
 * other fields have none until asked for; one made is kept up to date as the run grows, equal
 * to one made from scratch; the answers are those of a run whose pyramids were all made. */
static void pyramid_on_demand(void **state)
{
    (void)state;
    mfu_store *st = NULL;
    mfu__srun *r = NULL;
    mfu__server *s = live_server(&st, &r);
    for (int k = 0; k < MFU__F_COUNT_; k++)
        assert_false(r->mm_made[k]);

    /* 3000 rows at 10 points: the pyramid's candidates (level 0 fits a bucket 4 times) */
    args a = {{"fields", "max_points"}, {"step_time_s", "10"}, 2};
    size_t la = 0;
    char *body_a = series(s, &a, &la);
    for (int k = 0; k < MFU__F_COUNT_; k++)
        assert_int_equal(r->mm_made[k], k == MFU__F_STEP_TIME_S);
    assert_pyramid_fresh(&r->mm[MFU__F_STEP_TIME_S], mfu__srun_column(r, MFU__F_STEP_TIME_S), 3000);

    /* the run grows: the pyramid made is brought up to date, the others still wait */
    post(s, r, 3001, 5000);
    assert_true(r->mm_made[MFU__F_STEP_TIME_S] && !r->mm_made[MFU__F_TOKENS_PER_S]);
    assert_pyramid_fresh(&r->mm[MFU__F_STEP_TIME_S], mfu__srun_column(r, MFU__F_STEP_TIME_S), 5000);
    args b = {{"fields", "max_points"}, {"tokens_per_second", "10"}, 2};
    size_t lb = 0;
    char *body_b = series(s, &b, &lb);
    assert_true(r->mm_made[MFU__F_TOKENS_PER_S]);
    assert_pyramid_fresh(&r->mm[MFU__F_TOKENS_PER_S], mfu__srun_column(r, MFU__F_TOKENS_PER_S),
                         5000);

    /* the same answers as with every pyramid made at once */
    for (int k = 0; k < MFU__F_COUNT_; k++)
        assert_non_null(mfu__srun_mm(r, (mfu__field)k));
    drop_cache(r);
    size_t lc = 0;
    char *body_c = series(s, &b, &lc);
    assert_int_equal(lb, lc);
    assert_memory_equal(body_b, body_c, lb);
    free(body_a);
    free(body_b);
    free(body_c);
    live_server_free(s, st, r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(cache_and_axes),
        cmocka_unit_test(pyramid_on_demand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
